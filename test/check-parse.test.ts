import { describe, expect, it } from 'vitest';
import { checkRange, parsePerfdata, parsePerfdataDetailed, parsePluginOutput, parseRange } from '../src/index';

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
