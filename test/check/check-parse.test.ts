import { monitorEventLoopDelay } from 'node:perf_hooks';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { numberValue, parseNumber, scanNumber } from '../../src/check/plugin/number';
import {
  checkRange, formatPerfdata, parsePerfdata, parsePerfdataDetailed, parsePluginOutput, parseRange, runCheck,
} from '../../src/index';
import { childProcesses } from '../helpers';
import { repeatTo, timeRatio } from '../linear-time';

/**
 * Error objects constructed while fn runs. The parsers name the error classes
 * through the global object, so counting subclasses put there for the call see
 * every `new RangeError(…)` (and the rest) they make, caught or not.
 */
function errorsConstructed(fn: () => unknown, expectThrow = false): number {
  const g = globalThis as unknown as Record<string, unknown>;
  const names = ['Error', 'RangeError', 'TypeError', 'SyntaxError'] as const;
  const saved = names.map((name) => g[name]);
  let count = 0;
  names.forEach((name, i) => {
    const Base = saved[i] as ErrorConstructor;
    g[name] = class extends Base {
      constructor(...args: [string?]) {
        super(...args);
        count++;
      }
    };
  });
  try {
    fn();
    if (expectThrow) throw new (saved[0] as ErrorConstructor)('expected fn to throw');
  } catch (err) {
    if (!expectThrow) throw err;
  } finally {
    names.forEach((name, i) => {
      g[name] = saved[i];
    });
  }
  return count;
}

describe('parseRange / checkRange (monitoring-plugins guidelines)', () => {
  // [range, alerts for these values, does not alert for these]
  const table: Array<[string, number[], number[]]> = [
    ['10', [-1, 10.5, 11], [0, 5, 10]],
    ['10:', [9.99, -5], [10, 11, 1e9]],
    ['~:10', [10.01, 11], [-1e9, 0, 10]],
    ['10:20', [9, 21], [10, 15, 20]],
    ['@10:20', [10, 15, 20], [9.99, 20.01]],
    ['@10', [0, 10], [-1, 11]],
    ['-5:5', [-6, 6], [-5, 0, 5]],
    ['1e1:2E1', [9, 21], [10, 20]],
    ['~:', [], [-1e300, 0, 1e300]],
  ];
  it.each(table)('%s', (text, alert, ok) => {
    const r = parseRange(text);
    for (const v of alert) expect(checkRange(v, r), `${v} in ${text}`).toBe(true);
    for (const v of ok) expect(checkRange(v, r), `${v} in ${text}`).toBe(false);
  });

  it('returns start/end/alertInside with infinities for open ends', () => {
    expect(parseRange('10:')).toEqual({ start: 10, end: Infinity, alertInside: false });
    expect(parseRange('~:10')).toEqual({ start: -Infinity, end: 10, alertInside: false });
    expect(parseRange('@1:2')).toEqual({ start: 1, end: 2, alertInside: true });
  });

  it('rejects what is not a range', () => {
    for (const bad of ['', 'abc', '20:10', '1:2:3', '@', '~', '10x']) expect(() => parseRange(bad), bad).toThrow(RangeError);
    expect(() => parseRange(5 as never)).toThrow(TypeError);
  });
});

describe('parsePerfdata', () => {
  it('reads the guideline examples: quoted labels, units, missing fields, U', () => {
    const p = parsePerfdata("'disk used /'=41%;80;90;0;100 time=0.001s;;;0; 'it''s'=5c load1=U rta=0.080ms;100.000;500.000;0; x=-1.5e3");
    expect(p).toEqual([
      { label: 'disk used /', value: 41, uom: '%', warn: { start: 0, end: 80, alertInside: false }, crit: { start: 0, end: 90, alertInside: false }, min: 0, max: 100 },
      { label: 'time', value: 0.001, uom: 's', min: 0 },
      { label: "it's", value: 5, uom: 'c' },
      { label: 'load1', value: null, uom: '' },
      { label: 'rta', value: 0.08, uom: 'ms', warn: { start: 0, end: 100, alertInside: false }, crit: { start: 0, end: 500, alertInside: false }, min: 0 },
      { label: 'x', value: -1500, uom: '' },
    ]);
  });

  it('keeps unknown units as given and ranges in warn/crit', () => {
    expect(parsePerfdata('temp=21.5C;@10:30;~:40 size=3GB')).toEqual([
      { label: 'temp', value: 21.5, uom: 'C', warn: { start: 10, end: 30, alertInside: true }, crit: { start: -Infinity, end: 40, alertInside: false } },
      { label: 'size', value: 3, uom: 'GB' },
    ]);
  });

  it('skips garbage items and says why, keeping the rest', () => {
    const r = parsePerfdataDetailed('good=1 garbage bad=abc also=2;x;;y nolabel=');
    expect(r.perfdata.map((d) => d.label)).toEqual(['good', 'also']);
    expect(r.perfdata[1]).toEqual({ label: 'also', value: 2, uom: '' });
    expect(r.errors).toHaveLength(5);
    expect(r.errors.join('\n')).toMatch(/garbage/);
  });
});

describe('parsePluginOutput', () => {
  it('splits status, long output and perfdata spread over lines', () => {
    const text = 'DISK OK - free space: / 3326 MB (56%); | /=2643MB;5948;5958;0;5968\n' +
      '/ 15272 MB (77%);\n/boot 68 MB (69%);\n/home 69357 MB (27%);\n/var/log 819 MB (84%); | /boot=68MB;88;93;0;98\n' +
      '/home=69357MB;253404;253409;0;253414\n/var/log=818MB;970;975;0;980\n';
    const r = parsePluginOutput(text);
    expect(r.output).toBe('DISK OK - free space: / 3326 MB (56%);');
    expect(r.longOutput).toBe('/ 15272 MB (77%);\n/boot 68 MB (69%);\n/home 69357 MB (27%);\n/var/log 819 MB (84%); ');
    expect(r.perfdata.map((p) => p.label)).toEqual(['/', '/boot', '/home', '/var/log']);
    expect(r.perfdata[3]).toMatchObject({ value: 818, uom: 'MB', max: 980 });
  });

  it('handles no perfdata, CRLF and empty text', () => {
    expect(parsePluginOutput('OK - fine\r\nmore\r\n')).toMatchObject({ output: 'OK - fine', longOutput: 'more', perfdata: [] });
    expect(parsePluginOutput('')).toMatchObject({ output: '', longOutput: '', perfdata: [] });
    expect(parsePluginOutput('OK | ')).toMatchObject({ output: 'OK', perfdata: [] });
  });
});

describe('untrusted perfdata in linear time (issue 8)', () => {
  // 65,000 digits and U+2028: the old value pattern `(.*)$` could not cross
  // the line separator and backtracked over every digit, 3.6 s for one check.
  const digitsThenLs = (n: number) => `a=${'1'.repeat(n)}\u2028`;

  it('perfdata value of 65,000 digits followed by U+2028 parses in linear time', () => {
    const adversarial = digitsThenLs(65_000);
    const plain = repeatTo('time=0.001s;;;0; ', adversarial.length);
    expect(adversarial.length).toBeGreaterThanOrEqual(65_000);
    const ratio = timeRatio(parsePerfdata, adversarial, plain, 20);
    // Quadratic was ~1000x here (6 s against ~5 ms).
    expect(ratio).toBeLessThan(20);
  });

  it('plugin output of 1 MiB ending in a digit run and U+2028/U+2029 parses in linear time', () => {
    const size = 1 << 20;
    const adversarial = `OK | a=${'1'.repeat(size)}\u2028 b=2\u2029\nmore | c=${'3'.repeat(size / 2)}\u2028 ${'4'.repeat(size / 2)}\u2029`;
    const plain = `OK | ${repeatTo('time=0.001s;;;0; ', adversarial.length - 5)}`;
    const ratio = timeRatio(parsePluginOutput, adversarial, plain, 20, 3);
    expect(ratio).toBeLessThan(20);
    const r = parsePluginOutput(adversarial);
    expect(r.perfdata.map((p) => [p.label, p.uom])).toEqual([['a', '\u2028'], ['b', '\u2029'], ['c', '\u2028']]);
    expect(r.perfdataErrors).toHaveLength(1); // the label-less digit run on the second line
    expect(r.longOutput).toBe('more ');
  });

  it('perfdata with a bad threshold in every item costs no exception per field', () => {
    // Found by the fuzz suite: each bad warn/crit threw a RangeError inside the
    // parser, ~28x the time of good perfdata (a plugin printing 64 KiB of them
    // held the loop ~10k stack traces long). Without throws it is ~4x: bound 12.
    const adversarial = repeatTo('a=1;x;y;z;w ', 256 * 1024);
    const plain = repeatTo('time=0.001s;;;0; ', adversarial.length);
    expect(parsePerfdataDetailed(adversarial).errors.length).toBeGreaterThan(40_000);
    // The property itself, without a clock: errors made while parsing it.
    expect(errorsConstructed(() => parsePerfdataDetailed(adversarial))).toBe(0);
    expect(errorsConstructed(() => parseRange('x'), true)).toBe(1); // the counter counts
    // Messages quote at most a prefix of a bad item, however long it is.
    const long = parsePerfdataDetailed(`a=${'x'.repeat(65_000)} b=1;${'~'.repeat(65_000)}`).errors;
    expect(long).toHaveLength(2);
    for (const message of long) expect(message.length).toBeLessThan(200);
    expect(() => parseRange('~'.repeat(65_000))).toThrow(/^not a threshold range: "~{100}"… \(65000 characters\)$/);
    expect(timeRatio(parsePerfdata, adversarial, plain, 12)).toBeLessThan(12);
  });

  it('U+2028, U+2029 and no-break space are ordinary characters in perfdata, not separators', () => {
    expect(parsePerfdata('a=1\u2028 b=2ms\u2029;5 c\u00a0d=3')).toEqual([
      { label: 'a', value: 1, uom: '\u2028' },
      { label: 'b', value: 2, uom: 'ms\u2029', warn: { start: 0, end: 5, alertInside: false } },
      { label: 'c\u00a0d', value: 3, uom: '' },
    ]);
    // Only ASCII blanks separate items.
    expect(parsePerfdata('a=1\tb=2\rc=3\nd=4').map((p) => p.label)).toEqual(['a', 'b', 'c', 'd']);
    // warn/crit go through parseRange, which trims; min/max must be numbers.
    const r = parsePerfdataDetailed('a=1;10\u2028;;5\u2028');
    expect(r.perfdata).toEqual([{ label: 'a', value: 1, uom: '', warn: { start: 0, end: 10, alertInside: false } }]);
    expect(r.errors).toEqual(['"a": ignored min "5\u2028" (not a number)']);
  });

  it('runCheck of a plugin printing 65,000 digits and U+2028 does not block the event loop', async () => {
    const before = new Set(childProcesses().map((c) => c.pid));
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const r = await runCheck(['/usr/bin/printf', 'OK | a=%s\u2028', '1'.repeat(65_000)]);
    // A blocked loop is recorded when the histogram's timer next fires: let it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    delay.disable();
    // The whole check blocked the loop for 3.6 s before; now parsing is ~1 ms.
    expect(delay.max / 1e6).toBeLessThan(500);
    expect(r.truncated).toBe(false);
    expect(r).toMatchObject({ state: 0, output: 'OK', perfdataErrors: [] });
    expect(r.perfdata).toEqual([{ label: 'a', value: Number('1'.repeat(65_000)), uom: '\u2028' }]);
    expect(childProcesses().filter((c) => !before.has(c.pid))).toEqual([]);
  });
});

describe('formatPerfdata reads back as the same data', () => {
  it('-0, infinities and units that would continue a shorter number survive format then parse', () => {
    // Each of these came back different before: "-0" printed as 0, 1e999 as
    // "Infinity" (not a number), and `1,,5` (1 with unit ",5") as "1,5" = 1.5.
    const text = "z=-0;-0:1;@0:-0;-0;1e999 big=1e999;~:-1e999;1e999: u=1,,5 e=1e5e5 p=7.5.5 n=U";
    const parsed = parsePerfdata(text);
    expect(parsed).toHaveLength(6);
    expect(Object.is(parsed[0].value, -0)).toBe(true);
    expect(parsed[2]).toEqual({ label: 'u', value: 1, uom: ',5' });
    expect(parsed[3]).toEqual({ label: 'e', value: 1e5, uom: 'e5' });
    const again = parsePerfdata(formatPerfdata(parsed));
    expect(again).toEqual(parsed);
    expect(Object.is(again[0].value, -0)).toBe(true);
    expect(Object.is(again[0].min, -0)).toBe(true);
    expect(Object.is(again[0].crit?.end, -0)).toBe(true);
  });

  it('labels with blanks, quotes, = and U+2028 are quoted so they read back', () => {
    const data = [
      { label: "it's = a label", value: 1, uom: '%' },
      { label: "'", value: 2, uom: '' },
      { label: 'line\u2028sep', value: 3, uom: 's' },
      { label: 'semi;colon', value: null, uom: '' },
    ];
    expect(parsePerfdata(formatPerfdata(data))).toEqual(data);
  });
});

describe('number scan agrees with the patterns it replaced (short inputs, where they were fast)', () => {
  // The patterns as they were before issue 8, as an oracle.
  // eslint-disable-next-line regexp/no-super-linear-backtracking -- the slow pattern itself, on short strings
  const OLD_VALUE = /^([-+]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][-+]?\d+)?)(.*)$/;
  const OLD_NUMBER = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;
  const oldParseNumber = (text: string) => {
    const t = text.includes(',') && !text.includes('.') ? text.replace(',', '.') : text;
    return OLD_NUMBER.test(t) ? Number(t) : null;
  };
  const numberish = fc
    .array(fc.constantFrom('1', '0', '9', '.', ',', 'e', 'E', '+', '-', 'x', 'U', ' ', '%', 'ms', '\u2028'), { maxLength: 12 })
    .map((parts) => parts.join(''));
  const text = fc.oneof(numberish, fc.string({ maxLength: 12 }));

  it('a perfdata value splits into number and unit where the old pattern split it', () => {
    fc.assert(fc.property(text.filter((t) => !/[\n\r\u2028\u2029]/.test(t)), (raw) => {
      const m = OLD_VALUE.exec(raw);
      const end = scanNumber(raw, 0);
      expect(end === 0 ? null : [raw.slice(0, end), raw.slice(end)]).toEqual(m === null ? null : [m[1], m[2]]);
      if (m !== null) expect(numberValue(raw.slice(0, end))).toBe(oldParseNumber(m[1]));
    }), { numRuns: 2000 });
  });

  it('parseNumber accepts and reads exactly what the old pattern did', () => {
    fc.assert(fc.property(text, (t) => {
      expect(parseNumber(t)).toBe(oldParseNumber(t));
    }), { numRuns: 2000 });
  });
});
