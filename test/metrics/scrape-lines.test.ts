// A scrape's per-check lines as the addon writes them from the scrape's
// columns (native/metrics/scrape-lines.c, src/metrics/scrape/check-view.ts): every number as
// num() gives it, lines never split between chunks, a check longer than a
// chunk, and columns that do not hold together refused with a TypeError,
// never a crash of the host.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { binding } from '../../src/binding/binding';
import { decimalOf } from '../../src/metrics/scrape/decimal';
import { allFamilies, formatMetrics, metricsChunks, renderFamilies } from '../../src/metrics/scrape/runner-text';
import { takeSnapshot } from '../../src/metrics/model/metrics-snapshot';
import { PerfdataLimit } from '../../src/metrics/model/perfdata-limit';
import { num } from '../../src/metrics/text/metrics-text';
import { FakeSource } from './metrics-source';

/** The value of each noshell_check_perfdata line of check `id`, as text, by label. */
function perfdataValues(text: string, id: string): Map<string, string> {
  const m = new Map<string, string>();
  const head = `noshell_check_perfdata{check="${id}",label="`;
  for (const line of text.split('\n')) {
    if (!line.startsWith(head)) continue;
    const label = line.slice(head.length, line.indexOf('"', head.length));
    m.set(label, line.slice(line.lastIndexOf(' ') + 1));
  }
  return m;
}

const EDGE = [
  0, -0, 1, 1023, 1024, -1, 2 ** 31, 2 ** 32 + 1, 2 ** 48, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 53, -(2 ** 53), 1e21, 1e-7, 1e-6,
  9.99e-7, 0.1, 0.5, -0.5, 1.5e-7, NaN, Infinity, -Infinity, Number.MIN_VALUE, -Number.MAX_VALUE, Number.MAX_VALUE,
  1764770000.123, 1796315464.3305366, 0.0024747659999999998, 0.003920166015625, 281474976710655 / 1e15, 281474976710656 / 1e15,
  123456789012345.6, 2 ** 48 / 10, 0.1 + 0.2,
];
/** Numbers with a short decimal text (the addon writes those itself), and any double. */
const value = fc.oneof(
  fc.double(),
  fc.tuple(fc.integer({ min: -(2 ** 48), max: 2 ** 48 }), fc.integer({ min: 1, max: 16 })).map(([x, d]) => x / 10 ** d),
  fc.maxSafeInteger(),
  fc.constantFrom(...EDGE),
);

describe('the addon\'s line writer', () => {
  it('writes every number as num() gives it: safe integers, short decimals, 17-digit ones, exponents, NaN, ±Inf', () => {
    fc.assert(fc.property(fc.array(value, { minLength: 1, maxLength: 90 }), (vs) => {
      const source = new FakeSource();
      source.define('n');
      source.result('n', 0, vs.map((v, i) => ({ label: `v${i}`, value: v, uom: '' })));
      const got = perfdataValues(formatMetrics(source), 'n');
      expect([...got.values()]).toEqual(vs.map((v) => num(v)));
    }), { numRuns: 300, seed: 13 });
  });

  it('decimalOf(v) is X · 16 + d for v = X / 10^d only where String(v) is X\'s digits with a point d from the end', () => {
    fc.assert(fc.property(value, (v) => {
      const e = decimalOf(v);
      if (Number.isNaN(e)) return;
      const a = Math.abs(e);
      const d = a % 16;
      const digits = String((a - d) / 16).padStart(d + 1, '0');
      const text = `${e < 0 ? '-' : ''}${digits.slice(0, digits.length - d)}.${digits.slice(digits.length - d)}`;
      expect(text).toBe(String(v));
    }), { numRuns: 20_000, seed: 7 });
  });

  it('a check whose lines are longer than a chunk (a 1.7 MB id) gets a chunk of its own; no line is split', async () => {
    const source = new FakeSource();
    const big = `big-${'é"\\'.repeat(290_000)}`;
    for (const id of ['a', big, 'b']) {
      source.define(id);
      source.result(id, 2, [{ label: 'rta', value: 0.25, uom: 'ms', warn: { start: 0, end: 100, alertInside: false } }]);
    }
    const want = renderFamilies(allFamilies, takeSnapshot(source, new PerfdataLimit()));
    const chunks: string[] = [];
    for await (const c of metricsChunks(source, { sliceMs: 0, chunkBytes: 64 * 1024 })) chunks.push(c);
    expect(chunks.join('')).toBe(want);
    for (const c of chunks) expect(c.endsWith('\n')).toBe(true);
    expect(Math.max(...chunks.map((c) => Buffer.byteLength(c)))).toBeGreaterThan(1024 * 1024);
  });

  it('a figure that is not a number (a source in plain JavaScript) is written as its text, as a render from scratch does', () => {
    const source = new FakeSource();
    source.define('js');
    source.result('js', 1, [{ label: 'v', value: 'abc' as unknown as number, uom: '' }, { label: 'w', value: '0.5' as unknown as number, uom: '' }]);
    const c = source.checks.get('js')!;
    (c.last as unknown as { state: unknown }).state = '2';
    (c.definition as unknown as { interval: unknown }).interval = 'soon';
    const want = renderFamilies(allFamilies, takeSnapshot(source, new PerfdataLimit()));
    expect(formatMetrics(source)).toBe(want);
    expect(want).toContain('noshell_check_state{check="js"} 2\n');
    expect(want).toContain('noshell_check_perfdata{check="js",label="v",uom=""} abc\n');
  });

  it('refuses columns, pieces and state that do not hold together with a TypeError', () => {
    const row = new Float64Array(14);
    const u32 = (n: number) => new Uint32Array(n);
    const seg = Buffer.alloc(256 * 1024);
    const ends = u32(65_536);
    ends[0] = 3;
    seg.write('{x"');
    const cols = [row, u32(1), u32(1), u32(2), u32(1), u32(0), u32(0), new Float64Array(0)] as const;
    const state = (next: number, stop: number, pos: number, n: number, items = 0, slots = 0, pieces = 1) => Float64Array.of(next, stop, pos, n, items, slots, pieces);
    const out = Buffer.alloc(256);
    const name = Buffer.from('f');
    // The call itself works: one line.
    const ok = state(0, 1, 0, 1);
    expect(binding.scrapeLines(0, name, cols, [seg], [ends], ok, out)).toBe(0);
    expect(out.toString('latin1', 0, ok[2])).toBe('f{x"} 0\n');
    const bad: Array<[string, () => number]> = [
      ['n past the row', () => binding.scrapeLines(0, name, cols, [seg], [ends], state(0, 2, 0, 2), out)],
      ['stop past n', () => binding.scrapeLines(0, name, cols, [seg], [ends], state(0, 2, 0, 1), out)],
      ['pos past out', () => binding.scrapeLines(0, name, cols, [seg], [ends], state(0, 1, 257, 1), out)],
      ['a fraction', () => binding.scrapeLines(0, name, cols, [seg], [ends], state(0.5, 1, 0, 1), out)],
      ['items past ibits', () => binding.scrapeLines(0, name, cols, [seg], [ends], state(0, 1, 0, 1, 1), out)],
      ['pieces past ends', () => binding.scrapeLines(0, name, cols, [seg], [ends], state(0, 1, 0, 1, 0, 0, 65_537), out)],
      ['a short segment', () => binding.scrapeLines(0, name, cols, [seg.subarray(1)], [ends], ok.slice(), out)],
      ['a column of the wrong type', () => binding.scrapeLines(0, name, [u32(14), ...cols.slice(1)] as never, [seg], [ends], ok.slice(), out)],
      ['seven columns', () => binding.scrapeLines(0, name, cols.slice(1) as never, [seg], [ends], ok.slice(), out)],
      ['family 17', () => binding.scrapeLines(17, name, cols, [seg], [ends], ok.slice().fill(0, 0, 1), out)],
      ['a piece past the segments', () => binding.scrapeLines(0, name, cols, [], [ends], state(0, 1, 0, 1), out)],
      ['not a number', () => { row[0] = 0.5; return binding.scrapeLines(0, name, cols, [seg], [ends], state(0, 1, 0, 1), out); }],
      ['no arguments', () => (binding.scrapeLines as unknown as () => number)()],
    ];
    for (const [what, call] of bad) expect(call, what).toThrow(TypeError);
  });

  // Outside review: each of these aborted the process or wrote through a stale pointer.
  it('reads every array element before it holds any buffer\'s data: a getter that throws, detaches or shrinks one cannot make it crash', () => {
    const seg = Buffer.alloc(256 * 1024);
    seg.write('{x"');
    const ends = new Uint32Array(65_536);
    ends[0] = 3;
    const cols = () => [new Float64Array(14), new Uint32Array(1), new Uint32Array(1), new Uint32Array(2), new Uint32Array(1), new Uint32Array(0), new Uint32Array(0), new Float64Array(0)];
    const state = () => Float64Array.of(0, 1, 0, 1, 0, 0, 1);
    const name = Buffer.from('f');
    // A getter that throws: its error is the call's (no abort).
    const throwing = cols();
    Object.defineProperty(throwing, 7, { get: () => { throw new RangeError('from a getter'); } });
    expect(() => binding.scrapeLines(0, name, throwing as never, [seg], [ends], state(), Buffer.alloc(64))).toThrow('from a getter');
    // A getter that moves `out` away: the call sees it empty and writes nothing into the memory it had.
    const out = new Uint8Array(new ArrayBuffer(64));
    const moved: Uint8Array[] = [];
    const segs = [seg];
    Object.defineProperty(segs, 0, { get: () => { moved.push(new Uint8Array(structuredClone(out.buffer, { transfer: [out.buffer] }))); return seg; } });
    const st = state();
    expect(binding.scrapeLines(0, name, cols() as never, segs, [ends], st, out)).toBeGreaterThan(0);
    expect(out.length).toBe(0);
    expect(st[2]).toBe(0);
    expect(moved[0].every((b) => b === 0)).toBe(true);
    // A getter that shrinks a resizable `out` to nothing: the same.
    const rab = new ArrayBuffer(1 << 20, { maxByteLength: 1 << 20 });
    const grow = new Uint8Array(rab);
    const segs2 = [seg];
    Object.defineProperty(segs2, 0, { get: () => { rab.resize(0); return seg; } });
    expect(binding.scrapeLines(0, name, cols() as never, segs2, [ends], state(), grow)).toBeGreaterThan(0);
    // A state on a SharedArrayBuffer works like any other; an empty `out` asks for room.
    const shared = new Float64Array(new SharedArrayBuffer(56));
    shared.set(state());
    expect(binding.scrapeLines(0, name, cols() as never, [seg], [ends], shared, Buffer.alloc(64))).toBe(0);
    expect(shared[2]).toBe('f{x"} 0\n'.length);
    const st2 = state();
    expect(binding.scrapeLines(0, name, cols() as never, [seg], [ends], st2, Buffer.alloc(0))).toBeGreaterThan(0);
    expect(st2[0]).toBe(0);
    expect(st2[2]).toBe(0);
  });

  it('a threshold end that is not a number (a plain-JavaScript source) has no line, as in a render from scratch', () => {
    const source = new FakeSource();
    source.define('t');
    const odd = (start: unknown, end: unknown) => ({ start, end, alertInside: false }) as unknown as { start: number; end: number; alertInside: boolean };
    source.result('t', 0, [
      { label: 'a', value: 1, uom: '', warn: odd(0, null) },
      { label: 'b', value: 1, uom: 'ms', warn: odd('0', '5'), crit: odd(undefined, 7) },
    ]);
    const want = renderFamilies(allFamilies, takeSnapshot(source, new PerfdataLimit()));
    expect(formatMetrics(source)).toBe(want);
    expect(want).toContain('noshell_check_perfdata_crit{check="t",label="b",uom="s",alert="outside",bound="high"} 0.007\n');
  });
});
