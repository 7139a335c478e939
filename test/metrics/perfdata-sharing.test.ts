// What a result keeps until its check's next one is made of fewer objects
// (issue 19): short threshold texts give one frozen range each (read-only in
// the types too: test/consumer/example.mts), a datum is made whole by one
// literal, and a result without perfdata errors holds one frozen empty array.
// None of it may change what is parsed.
import { existsSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePerfdata, parsePerfdataDetailed, parsePluginOutput, parseRange, runCheck } from '../../src/index';

const CHECK_DUMMY = '/usr/lib/nagios/plugins/check_dummy';
const hasPlugins = existsSync(CHECK_DUMMY);
if (!hasPlugins) {
  // CI installs monitoring-plugins-basic: this is never skipped there.
  console.warn('skipped: runCheck of check_dummy sharing ranges: monitoring-plugins-basic is not installed');
}

describe('threshold ranges of perfdata', () => {
  it('the same short text gives the same frozen range, equal to parseRange of it', () => {
    const a = parsePerfdata('x=1;80:90;@~:5 y=2;80:90;10:');
    const b = parsePerfdata('z=3;80:90;@~:5');
    expect(a[0].warn).toBe(a[1].warn);
    expect(a[0].warn).toBe(b[0].warn);
    expect(a[0].crit).toBe(b[0].crit);
    expect(a[0].warn).toEqual(parseRange('80:90'));
    expect(a[0].crit).toEqual(parseRange('@~:5'));
    expect(a[1].crit).toEqual({ start: 10, end: Infinity, alertInside: false });
    expect(Object.isFrozen(a[0].warn)).toBe(true);
    // A shared range cannot be changed under another result (ESM: strict mode).
    expect(() => {
      (a[0].warn as { end: number }).end = 1;
    }).toThrow(TypeError);
    expect(b[0].warn!.end).toBe(90);
  });

  it('a text of 13 characters or more is parsed anew each time (it may be a slice of the whole output)', () => {
    const text = '1000000:2000000'; // 15 characters
    const [p] = parsePerfdata(`a=1;${text}`);
    const [q] = parsePerfdata(`a=1;${text}`);
    expect(p.warn).toEqual({ start: 1_000_000, end: 2_000_000, alertInside: false });
    expect(p.warn).toEqual(q.warn);
    expect(p.warn).not.toBe(q.warn);
    expect(Object.isFrozen(p.warn)).toBe(false);
  });

  it('a bad threshold is reported on every parse, also once remembered', () => {
    for (let k = 0; k < 3; k++) {
      const r = parsePerfdataDetailed('a=1;20:10;zz b=2;;x');
      expect(r.perfdata).toEqual([{ label: 'a', value: 1, uom: '' }, { label: 'b', value: 2, uom: '' }]);
      expect(r.errors).toEqual(['"a": ignored warn "20:10" (not a range)', '"a": ignored crit "zz" (not a range)', '"b": ignored crit "x" (not a range)']);
    }
  });

  it('over many more distinct texts than are remembered, every range equals parseRange of its text', () => {
    const end = fc.oneof(fc.integer({ min: -999, max: 999 }).map(String), fc.constantFrom('', '~', '1e2', '0.5', '-0'));
    const range = fc.tuple(fc.boolean(), end, fc.boolean(), end).map(([at, a, colon, b]) => `${at ? '@' : ''}${colon ? `${a}:${b}` : b}`);
    const texts = fc.sample(range, { numRuns: 20_000, seed: 19 });
    expect(new Set(texts).size).toBeGreaterThan(4096);
    for (const t of texts) {
      const { perfdata, errors } = parsePerfdataDetailed(`v=1;${t}`);
      let want: unknown;
      try {
        want = parseRange(t);
      } catch {
        want = undefined;
      }
      expect(perfdata[0].warn, t).toEqual(want);
      expect(errors.length, t).toBe(want === undefined && t !== '' ? 1 : 0);
    }
  });
});

describe('perfdata items', () => {
  it('have the fields they were given, in the order label, value, uom, warn, crit, min, max (all 16 sets)', () => {
    const fields = ['warn', 'crit', 'min', 'max'] as const;
    const text = { warn: '10', crit: '@5:20', min: '0', max: '100' };
    const value = { warn: parseRange('10'), crit: parseRange('@5:20'), min: 0, max: 100 };
    for (let set = 0; set < 16; set++) {
      const has = fields.filter((_, i) => (set >> i) & 1);
      const item = `'l b'=4.5ms;${fields.map((f) => (has.includes(f) ? text[f] : '')).join(';')}`;
      const [d] = parsePerfdata(item);
      expect(Object.keys(d), item).toEqual(['label', 'value', 'uom', ...has]);
      expect(d, item).toEqual({ label: 'l b', value: 4.5, uom: 'ms', ...Object.fromEntries(has.map((f) => [f, value[f]])) });
    }
  });
});

describe('results without perfdata errors', () => {
  it('hold one frozen empty array; results with errors, and every perfdata array, are their own', () => {
    const none = parsePluginOutput('OK - fine\nmore');
    const again = parsePluginOutput('WARNING - also fine');
    expect(none.perfdataErrors).toEqual([]);
    expect(none.perfdataErrors).toBe(again.perfdataErrors);
    expect(Object.isFrozen(none.perfdataErrors)).toBe(true);
    // Perfdata arrays, also empty ones, can be added to (a duration, say) without touching another result.
    expect(none.perfdata).toEqual([]);
    expect(none.perfdata).not.toBe(again.perfdata);
    none.perfdata.push({ label: 'duration', value: 1, uom: 's' });
    expect(again.perfdata).toEqual([]);
    expect(parsePluginOutput('OK').perfdata).toEqual([]);
    const some = parsePluginOutput('OK | a=1 b=x');
    expect(some.perfdata).toEqual([{ label: 'a', value: 1, uom: '' }]);
    expect(some.perfdataErrors).toEqual(['skipped "b": value "x" is not a number']);
    expect(Object.isFrozen(some.perfdataErrors)).toBe(false);
  });

  it.skipIf(!hasPlugins)('runCheck of a real plugin: the same range object in two runs, the frozen empty errors', async () => {
    const args = [CHECK_DUMMY, '1', 'WARN | load=2.5;2:4;@0:1;0; x=1'];
    const [r1, r2] = [await runCheck(args), await runCheck(args)];
    expect(r1.state).toBe(1);
    expect(r1.perfdata).toEqual([
      { label: 'load', value: 2.5, uom: '', warn: { start: 2, end: 4, alertInside: false }, crit: { start: 0, end: 1, alertInside: true }, min: 0 },
      { label: 'x', value: 1, uom: '' },
    ]);
    expect(r2.perfdata[0].warn).toBe(r1.perfdata[0].warn);
    expect(r2.perfdata[0].crit).toBe(r1.perfdata[0].crit);
    expect(r1.perfdataErrors).toBe(r2.perfdataErrors);
    const plain = await runCheck([CHECK_DUMMY, '0', 'all good']);
    expect(plain.output).toBe('OK: all good');
    expect(plain.perfdata).toEqual([]);
    expect(Object.isFrozen(plain.perfdata)).toBe(false);
    const failed = await runCheck(['/nonexistent/check_x']);
    expect(failed.spawnError).toBe('ENOENT');
    expect(Object.isFrozen(failed.perfdataErrors)).toBe(true);
    expect(Object.isFrozen(failed.perfdata)).toBe(false);
  });
});
