// Scrapes written a family at a time from each check's view (runner.metrics(),
// metricsChunks) against a from-scratch render of the same state, byte for
// byte, over random histories (issue 19).
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { genericFamilies } from '../../src/metrics/scrape/check-lines';
import { perCheckFamilies } from '../../src/metrics/scrape/check-view';
import { allFamilies, formatMetrics, metricsChunks, renderFamilies } from '../../src/metrics/scrape/runner-text';
import { perfdataExposure } from '../../src/metrics/model/metrics-options';
import { takeSnapshot } from '../../src/metrics/model/metrics-snapshot';
import { configureRunnerMetrics, metricsStateOf } from '../../src/metrics/scrape/metrics-state';
import { PerfdataLimit, perfdataLimitOf } from '../../src/metrics/model/perfdata-limit';
import type { PerfDatum } from '../../src/check/plugin/perfdata';
import { registerRunnerMetrics } from '../../src/metrics/prom/runner-metrics';
import { bigSource, FakeSource } from './metrics-source';
import { canonical, parseExposition, promtoolCheck, requirePeer } from './metrics-text';

const havePromtool = requirePeer('promtool', 'prometheus');

async function joined(chunks: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const c of chunks) text += c;
  return text;
}

const IDS = ['a', 'b', 'web-1', 'web-2', 'q"x', 'n\nl\\', 'ü 😀', 'x"\\ü\n😀'];
const LABELS = ['rta', 'pl', 'odd label', 'we"ird\\', 'x'.repeat(12), 'n\nl', 'té"mp\n'];
const range = fc.record({
  start: fc.oneof(fc.constant(-Infinity), fc.constant(0), fc.double({ noNaN: true, min: -1e6, max: 1e6 })),
  end: fc.oneof(fc.constant(Infinity), fc.double({ noNaN: true, min: -1e6, max: 1e6 })),
  alertInside: fc.boolean(),
});
const datum: fc.Arbitrary<PerfDatum> = fc.record({
  label: fc.oneof(fc.constantFrom(...LABELS), fc.nat(40).map((n) => `run_${n}`)),
  value: fc.oneof(fc.constant(null), fc.double({ noDefaultInfinity: false }), fc.integer(), fc.maxSafeInteger()),
  uom: fc.constantFrom('', 'ms', 'us', 'KB', 'c', '%', 'zz'),
  warn: fc.option(range, { nil: undefined }),
  crit: fc.option(range, { nil: undefined }),
  min: fc.option(fc.double({ noNaN: true }), { nil: undefined }),
  max: fc.option(fc.double({ noNaN: true }), { nil: undefined }),
}, { requiredKeys: ['label', 'value', 'uom'] });
const id = fc.constantFrom(...IDS);
const metricsOption = fc.constantFrom(undefined, true, false, { perfdata: false }, { perfdata: true });
const exposure = fc.constantFrom(undefined, true, false, { checks: ['web-*', 'a'] }, { labels: ['r*', 'pl', 'n\nl'] }, { checks: ['b'], labels: ['odd label'] });

type Op =
  | { op: 'define'; id: string; interval: number; metrics: (typeof metricsOption extends fc.Arbitrary<infer T> ? T : never) }
  | { op: 'remove'; id: string }
  | { op: 'running'; id: string; running: boolean }
  | { op: 'result'; id: string; state: 0 | 1 | 2 | 3; perfdata: PerfDatum[] }
  | { op: 'limit'; limit: number; maxBytes: number }
  | { op: 'exposure'; perfdata: (typeof exposure extends fc.Arbitrary<infer T> ? T : never) }
  | { op: 'scrape'; how: 'sync' | 'chunks' }
  | { op: 'overlap' };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('define' as const), id, interval: fc.constantFrom(1000, 60_000, 1.5), metrics: metricsOption }),
  fc.record({ op: fc.constant('remove' as const), id }),
  fc.record({ op: fc.constant('running' as const), id, running: fc.boolean() }),
  { arbitrary: fc.record({ op: fc.constant('result' as const), id, state: fc.constantFrom(0, 1, 2, 3) as fc.Arbitrary<0 | 1 | 2 | 3>, perfdata: fc.array(datum, { maxLength: 6 }) }), weight: 4 },
  fc.record({ op: fc.constant('limit' as const), limit: fc.nat(6), maxBytes: fc.constantFrom(8, 256) }),
  fc.record({ op: fc.constant('exposure' as const), perfdata: exposure }),
  { arbitrary: fc.record({ op: fc.constant('scrape' as const), how: fc.constantFrom('sync' as const, 'chunks' as const) }), weight: 3 },
  fc.record({ op: fc.constant('overlap' as const) }),
);

describe('scrapes written a family at a time', () => {
  it('equal a from-scratch render byte for byte after any history of results, removals, re-adds, definition, cap and exposure changes', async () => {
    // kept: read as a CheckRunner is, each scrape reading again only the checks that changed (scrape-cache.ts).
    await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 80, size: 'max' }), fc.boolean(), async (ops, kept) => {
      const source = new FakeSource(kept);
      // The reference: its own cap, offered the same results at the same scrapes.
      const ref = new PerfdataLimit();
      let refExposure = perfdataExposure(undefined);
      for (const o of [...ops, { op: 'scrape', how: 'sync' } as const]) {
        if (o.op === 'define') source.define(o.id, { interval: o.interval, metrics: o.metrics });
        else if (o.op === 'remove') source.remove(o.id);
        else if (o.op === 'running') source.setRunning(o.id, o.running);
        else if (o.op === 'result') source.result(o.id, o.state, o.perfdata);
        else if (o.op === 'limit') {
          configureRunnerMetrics(source, { perfdataLimit: o.limit, perfdataLabelMaxBytes: o.maxBytes });
          ref.limit = o.limit;
          ref.maxLabelBytes = o.maxBytes;
        } else if (o.op === 'exposure') {
          configureRunnerMetrics(source, { perfdata: o.perfdata });
          // Left out (undefined), the option keeps what was set.
          if (o.perfdata !== undefined) refExposure = perfdataExposure(o.perfdata);
        } else if (o.op === 'overlap') {
          // A sliced scrape holds the kept columns while another is made whole, and each is as its state was.
          const first = metricsChunks(source, { sliceMs: 0, chunkBytes: 50 });
          const head = await first.next();
          const wantFirst = renderFamilies(allFamilies, takeSnapshot(source, ref, refExposure));
          expect(formatMetrics(source)).toBe(renderFamilies(allFamilies, takeSnapshot(source, ref, refExposure)));
          expect((head.done === true ? '' : head.value) + await joined({ [Symbol.asyncIterator]: () => first })).toBe(wantFirst);
        } else {
          const got = o.how === 'sync' ? formatMetrics(source) : await joined(metricsChunks(source, { sliceMs: 0, chunkBytes: 50 }));
          const want = renderFamilies(allFamilies, takeSnapshot(source, ref, refExposure));
          expect(got).toBe(want);
          // The kept columns and what each was made from stay in step; past them the keys' room holds nothing.
          const cache = metricsStateOf(source).cache;
          if (kept) {
            const k = cache.keys;
            expect(k.n).toBe(cache.views!.cols.n);
            expect([k.ids.slice(k.n).some((x) => x !== ''), k.defs.slice(k.n).some((x) => x !== null), k.lasts.slice(k.n).some((x) => x !== null)]).toEqual([false, false, false]);
            const spare = cache.spareKeys;
            if (spare !== null) expect([spare.n, spare.defs.some((x) => x !== null), spare.lasts.some((x) => x !== null)]).toEqual([0, false, false]);
          }
        }
      }
    }), { numRuns: Number(process.env.NOSHELL_FUZZ_RUNS ?? 300) });
  });

  it('every per-check family is written by the check-line writers (none falls back to the generic samples())', () => {
    expect(perCheckFamilies.length).toBe(17);
    expect(genericFamilies(perCheckFamilies)).toEqual([]);
    expect(genericFamilies(allFamilies.filter((f) => !perCheckFamilies.includes(f))).length).toBe(allFamilies.length - 17);
  });

  it('a prom-client registry of 3,000 checks is rendered over many turns of the event loop, a family a turn, with the samples formatMetrics gives', async () => {
    const source = bigSource(3000);
    const registry = new Registry();
    registerRunnerMetrics(source, registry);
    let turns = 0;
    let done = false;
    const spin = () => {
      turns++;
      if (!done) setImmediate(spin);
    };
    setImmediate(spin);
    const [a, b] = await Promise.all([registry.metrics(), registry.metrics()]);
    done = true;
    // Each of the families starts in a later turn than the one before (in one turn before, 1-2 counted).
    expect(turns).toBeGreaterThanOrEqual(allFamilies.length);
    const want = canonical(parseExposition(formatMetrics(source)));
    expect(want.length).toBeGreaterThan(3000 * 30);
    expect(canonical(parseExposition(a))).toEqual(want);
    expect(b).toBe(a);
    const single = await registry.getSingleMetricAsString('noshell_check_perfdata');
    expect(single.split('\n').filter((l) => l.startsWith('noshell_check_perfdata{')).length).toBe(3000 * 5);

    // Scrapes that begin while one is in flight share the next snapshot, taken once that one is
    // served: they see what changed after the first began, and they get the same text.
    // (Ten checks: the snapshot is made in the first turn, the families take one turn each after it.)
    const small = bigSource(10);
    const reg = new Registry();
    registerRunnerMetrics(small, reg);
    let firstDone = false;
    const first = reg.metrics().finally(() => (firstDone = true));
    for (let k = 0; k < 3; k++) await new Promise((r) => setImmediate(r));
    small.result('host-0/ping', 2, []);
    expect(firstDone).toBe(false);
    const [c, d, e] = await Promise.all([first, reg.metrics(), reg.metrics()]);
    const state = (t: string) => t.split('\n').find((l) => l.startsWith('noshell_check_state{check="host-0/ping"}'));
    expect(state(c)).toBe('noshell_check_state{check="host-0/ping"} 0');
    expect(state(d)).toBe('noshell_check_state{check="host-0/ping"} 2');
    expect(e).toBe(d);
  });

  it('a check added while a registry scrape is in flight keeps what its perfdata cap holds (read by another renderer meanwhile)', async () => {
    const show = (t: string) => t.split('\n').filter((l) => l.startsWith('noshell_check_perfdata{check="X"') || l.startsWith('noshell_check_perfdata_dropped_total{check="X",reason="limit"}'));
    const source = bigSource(3000);
    const registry = new Registry();
    registerRunnerMetrics(source, registry, { perfdataLimit: 1 });
    formatMetrics(source);
    const p: PerfDatum[] = [{ label: 'a', value: 1, uom: '' }, { label: 'b', value: 2, uom: '' }, { label: 'c', value: 3, uom: '' }];
    const scrape = registry.metrics();
    await new Promise((r) => setImmediate(r));
    source.define('X');
    source.result('X', 0, p);
    formatMetrics(source);
    source.result('X', 0, p);
    expect(show(formatMetrics(source))).toEqual(['noshell_check_perfdata{check="X",label="a",uom=""} 1', 'noshell_check_perfdata_dropped_total{check="X",reason="limit"} 4']);
    await scrape;
    source.result('X', 0, [p[1], p[0], p[2]]);
    // The cap still holds "a" and the counter goes on (the scrape's retain wiped them: "b", 2).
    expect(show(formatMetrics(source))).toEqual(['noshell_check_perfdata{check="X",label="a",uom=""} 1', 'noshell_check_perfdata_dropped_total{check="X",reason="limit"} 6']);
  });

  it('a result is admitted to the caps once, however often it is scraped; a removed check\'s caps are forgotten', () => {
    const source = bigSource(50);
    configureRunnerMetrics(source, { perfdataLimit: 1 });
    const p: PerfDatum[] = [{ label: 'a', value: 1, uom: '' }, { label: 'b', value: 2, uom: '' }];
    const dropped = (t: string, id: string) => t.split('\n').find((l) => l.startsWith(`noshell_check_perfdata_dropped_total{check="${id}",reason="limit"}`));
    source.result('host-7/ping', 0, p);
    source.result('host-9/ping', 0, p);
    const held = () => perfdataLimitOf(source).heldLabelChars();
    formatMetrics(source);
    const before = held();
    for (let k = 0; k < 3; k++) expect(dropped(formatMetrics(source), 'host-7/ping')).toBe('noshell_check_perfdata_dropped_total{check="host-7/ping",reason="limit"} 1');
    source.result('host-7/ping', 0, p);
    expect(dropped(formatMetrics(source), 'host-7/ping')).toBe('noshell_check_perfdata_dropped_total{check="host-7/ping",reason="limit"} 2');
    expect(held()).toBe(before);
    source.remove('host-9/ping');
    const text = formatMetrics(source);
    expect(text).not.toContain('host-9/ping');
    // What the cap held for the removed check (one label set, "1:a") is gone.
    expect(held()).toBe(before - '1:a'.length);
  });

  it('a sliced scrape yields to the event loop and gives the same text', async () => {
    const source = bigSource(3000);
    const whole = formatMetrics(source);
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    const chunks: string[] = [];
    for await (const c of metricsChunks(source, { sliceMs: 1 })) chunks.push(c);
    clearInterval(timer);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join('')).toBe(whole);
    expect(turns).toBeGreaterThan(0);
  });

  it('in a turn budget shared with others: waits for its next turn whenever it is spent, and gives the same text', async () => {
    const source = bigSource(3000);
    const whole = formatMetrics(source);
    let due = true;
    let nexts = 0;
    const budget = {
      get due() {
        return due;
      },
      next: () => {
        nexts++;
        return new Promise<void>((r) => setImmediate(r));
      },
    };
    // Always spent (others took it): a turn every 64 checks at least.
    expect(await joined(metricsChunks(source, { budget }))).toBe(whole);
    expect(nexts).toBeGreaterThan(3000 / 64);
    // Never spent: no turn waited for, whatever sliceMs says.
    due = false;
    nexts = 0;
    expect(await joined(metricsChunks(source, { budget, sliceMs: 0 }))).toBe(whole);
    expect(nexts).toBe(0);
  });

  it('what noshell run serves renders in the loop budget its writers share', async () => {
    const { CheckRunner } = await import('../../src/check/runner/runner');
    const { createRunnerSource } = await import('../../src/metrics/prom/runner-source');
    const { loopTurns } = await import('../../src/metrics/serve/turn-budget');
    const runner = new CheckRunner();
    for (let i = 0; i < 3000; i++) runner.add({ id: `c${i}`, command: ['/bin/true'], interval: 60_000 });
    const source = createRunnerSource(runner);
    const next = vi.spyOn(loopTurns, 'next');
    try {
      // The turn's budget spent before the render's first step (as a request and the writers may spend it).
      await loopTurns.next();
      const until = performance.now() + loopTurns.turnMs + 1;
      while (performance.now() < until);
      next.mockClear();
      const text = await joined(source.chunks!());
      expect(text).toContain('noshell_check_interval_seconds{check="c2999"} 60');
      expect(next).toHaveBeenCalled();
    } finally {
      next.mockRestore();
    }
  });

  it('a CheckRunner changed during a sliced scrape: each check shows once, as it was when the scrape began', async () => {
    const { CheckRunner } = await import('../../src/check/runner/runner');
    const runner = new CheckRunner();
    const def = (i: number, interval: number) => ({ id: `c${i}`, command: ['/bin/true'], interval });
    for (let i = 0; i < 3000; i++) runner.add(def(i, 60_000));
    // The scrape starts, renders 64 checks and yields (sliceMs 0); the rest are changed meanwhile.
    const scraped = joined(runner.metricsChunks({ sliceMs: 0 }));
    await new Promise((r) => setImmediate(r));
    // Every tenth check removed and added again with another interval, and new ones added.
    for (let i = 0; i < 3000; i += 10) {
      runner.remove(`c${i}`);
      runner.add(def(i, 120_000));
    }
    for (let i = 3000; i < 3100; i++) runner.add(def(i, 60_000));
    const text = await scraped;
    const intervals = text.split('\n').filter((l) => l.startsWith('noshell_check_interval_seconds{'));
    expect(intervals.length).toBe(3000);
    expect(new Set(intervals.map((l) => l.slice(0, l.indexOf('}')))).size).toBe(3000);
    expect(intervals.every((l) => l.endsWith('} 60'))).toBe(true);
    // The next scrape sees the runner as it is now.
    const now = runner.metrics().split('\n').filter((l) => l.startsWith('noshell_check_interval_seconds{'));
    expect(now.length).toBe(3100);
    expect(now.filter((l) => l.endsWith('} 120')).length).toBe(300);
  });

  it.runIf(havePromtool)('promtool accepts a 10,000-check scrape', () => {
    const text = formatMetrics(bigSource(10_000));
    expect(text.length).toBeGreaterThan(10_000 * 1000);
    expect(promtoolCheck(text)).toEqual({ status: 0, output: '' });
  });
});
