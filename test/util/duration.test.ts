import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/util/duration';
import { timeRatio } from '../linear-time';

describe('parseDuration', () => {
  it('reads numbers as ms and strings with a unit or in the bare unit', () => {
    expect(parseDuration(1500, 'x')).toBe(1500);
    expect(parseDuration('250ms', 'x')).toBe(250);
    expect(parseDuration(' 10 s ', 'x')).toBe(10_000);
    expect(parseDuration('1.5m', 'x')).toBe(90_000);
    expect(parseDuration('2h', 'x')).toBe(7_200_000);
    expect(parseDuration('30', 'x')).toBe(30);
    expect(parseDuration('30', 'x', 's')).toBe(30_000);
    expect(parseDuration('0.25', 'x', 's')).toBe(250);
    // Whitespace is what String.prototype.trim strips, Unicode included.
    expect(parseDuration('\u2028\u00a05\u3000s\ufeff', 'x')).toBe(5000);
  });

  it('refuses anything else with a TypeError naming the setting', () => {
    for (const bad of ['', ' ', '1.', '.5', '-1', '+1', '1e3', '10x', '1 m s', 'ms', '5 sec', '1,5s', 'constructor', '1constructor']) {
      expect(() => parseDuration(bad, 'checks[0].interval'), JSON.stringify(bad)).toThrow(/^checks\[0\]\.interval: expected a duration/);
    }
    for (const bad of [-1, NaN, Infinity, null, undefined, {}, ['1s']]) {
      expect(() => parseDuration(bad, 'x'), String(bad)).toThrow(TypeError);
    }
  });

  it('"1" + 64 Ki spaces + "x" is refused in linear time', () => {
    // The old pattern `\s*(unit)?\s*$` split the run of spaces every possible
    // way before failing: 0.33 s at 20,000 spaces, 1000s of times plain here.
    const spaces = ' '.repeat(64 * 1024);
    const parse = (text: string) => {
      try {
        return parseDuration(text, 'x');
      } catch (err) {
        if (!(err instanceof TypeError)) throw err;
        return null;
      }
    };
    expect(parse(`1${spaces}x`)).toBe(null);
    expect(parse(`1${spaces}s`)).toBe(1000);
    expect(timeRatio(parse, `1${spaces}x`, `1${spaces}s`, 20)).toBeLessThan(20);
    // The message quotes a prefix, not the whole value.
    expect(() => parseDuration(`1${spaces}x`, 'x')).toThrow(/^x: expected a duration .* got "1 {99}"… \(65538 characters\)$/);
  });

  it('agrees with the pattern it replaced on short strings (where that was fast)', () => {
    // eslint-disable-next-line regexp/no-super-linear-backtracking -- the slow pattern itself, on short strings
    const OLD = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/;
    const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
    const old = (text: string, bare: 'ms' | 's') => {
      const m = OLD.exec(text);
      return m ? Number(m[1]) * UNITS[m[2] ?? bare] : null;
    };
    const piece = fc.constantFrom('1', '05', '.', '.5', ' ', '\t', '\u2028', '\u00a0', 'ms', 's', 'm', 'h', 'x', '-', 'e3', 'constructor');
    const text = fc.oneof(fc.array(piece, { maxLength: 8 }).map((p) => p.join('')), fc.string({ maxLength: 10 }));
    fc.assert(fc.property(text, fc.constantFrom('ms' as const, 's' as const), (t, bare) => {
      let got: number | null;
      try {
        got = parseDuration(t, 'x', bare);
      } catch (err) {
        expect(err).toBeInstanceOf(TypeError);
        got = null;
      }
      expect(got).toBe(old(t, bare));
    }), { numRuns: 3000 });
  });

  it('names a refused value as written: NaN, Infinity and 10n, not null or a serializer error; objects and arrays by kind', () => {
    const said = (v: unknown) => {
      try {
        parseDuration(v, 'x');
      } catch (e) {
        expect(e).toBeInstanceOf(TypeError);
        return (e as Error).message.slice((e as Error).message.indexOf('got ') + 4);
      }
      return 'accepted';
    };
    expect([NaN, Infinity, -1, 10n, null, undefined, true, [1], { a: 1 }, Symbol('s')].map(said))
      .toEqual(['NaN', 'Infinity', '-1', '10n', 'null', 'undefined', 'true', 'an array', 'an object', 'Symbol(s)']);
    expect(said('x'.repeat(1 << 20)).length).toBeLessThan(200);
  });
});
