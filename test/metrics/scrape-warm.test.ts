// Warm passes (scrape-warm.ts): a served runner's kept scrape columns read
// between scrapes, so a scrape reads only what changed since the last pass,
// and the text is what a full read gives. serveMetrics runs them every
// refreshMs (refresh-loop.ts) and stops at close().
import { existsSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allFamilies, formatMetrics, metricsChunks, renderFamilies } from '../../src/metrics/scrape/runner-text';
import { perfdataExposure } from '../../src/metrics/model/metrics-options';
import { checkFiguresList } from '../../src/check/model/figures-list';
import { takeSnapshot, type MetricsSource } from '../../src/metrics/model/metrics-snapshot';
import { configureRunnerMetrics, metricsStateOf } from '../../src/metrics/scrape/metrics-state';
import { PerfdataLimit, perfdataLimitOf } from '../../src/metrics/model/perfdata-limit';
import { warmingOf, warmScrape } from '../../src/metrics/scrape/scrape-warm';
import { CheckRunner, createRunnerSource, serveMetrics } from '../../src/index';
import { bigSource, fivePerfdata } from './metrics-source';

const DUMMY = '/usr/lib/nagios/plugins/check_dummy';
const haveDummy = existsSync(DUMMY);
if (!haveDummy) {
  if (process.env.NOSHELL_REQUIRE_PEERS) throw new Error('monitoring-plugins-basic is required here');
  console.warn('skipped: warm passes of a real runner: monitoring-plugins-basic is not installed');
}

async function joined(chunks: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const c of chunks) text += c;
  return text;
}

const never = () => false;
const noPause = () => Promise.resolve();

describe('warm passes', () => {
  it('read what changed since the last scrape or pass, so the next scrape reads nothing again and gives a full read', async () => {
    const source = bigSource(3000, true);
    const ref = new PerfdataLimit();
    const want = () => renderFamilies(allFamilies, takeSnapshot(source, ref, perfdataExposure(undefined)));
    const cache = metricsStateOf(source).cache;

    expect(await warmScrape(source, never, noPause)).toEqual({ ran: true, read: 3000, full: true });
    expect(await warmScrape(source, never, noPause)).toEqual({ ran: true, read: 0, full: false });
    // Young enough: skipped.
    expect(await warmScrape(source, never, noPause, 60_000)).toEqual({ ran: false, read: 0, full: false });

    // New results, one of another shape, a removal and an addition.
    for (let i = 0; i < 3000; i += 300) source.result(`host-${i}/ping`, 1, fivePerfdata(i + 1));
    source.result('host-7/ping', 0, [{ label: 'only', value: 2, uom: 'ms' }]);
    source.remove('host-2999/ping');
    source.define('late');
    source.result('late', 3, fivePerfdata(5));
    const warm = await warmScrape(source, never, noPause);
    expect(warm).toEqual({ ran: true, read: 12, full: false });
    const text = await joined(metricsChunks(source, { sliceMs: 1 }));
    expect([cache.lastRead, cache.lastFull]).toEqual([0, false]);
    expect(text).toBe(want());
    expect(text).toContain('noshell_check_perfdata{check="host-7/ping",label="only",uom="s"} 0.002');
    expect(text).not.toContain('check="host-2999/ping"');
  });

  it('do not run for a source that is not a runner, nor while a scrape holds the kept columns; a streamed scrape waits for one in flight', async () => {
    const plain = bigSource(50, false);
    expect(await warmScrape(plain, never, noPause)).toEqual({ ran: false, read: 0, full: false });

    const source = bigSource(2000, true);
    const cache = metricsStateOf(source).cache;
    const ref = new PerfdataLimit();
    const want = () => renderFamilies(allFamilies, takeSnapshot(source, ref, perfdataExposure(undefined)));
    formatMetrics(source);
    // A scrape between its slices holds the kept columns: no pass meanwhile.
    const chunks = metricsChunks(source, { sliceMs: 0 });
    const first = await chunks.next();
    expect(first.done).toBe(false);
    expect(await warmScrape(source, never, noPause)).toEqual({ ran: false, read: 0, full: false });
    await chunks.return(undefined);

    // A pass that pauses at every step, let go one step at a time by hand.
    for (let i = 0; i < 2000; i += 100) source.result(`host-${i}/ping`, 2, fivePerfdata(i + 3));
    const gates: Array<() => void> = [];
    const pass = warmScrape(source, () => true, () => new Promise<void>((resolve) => gates.push(resolve)));
    expect(warmingOf(source)).toBeDefined();
    // A second pass asked for meanwhile runs nothing of its own.
    const second = warmScrape(source, never, noPause);
    let scraped: string | null = null;
    const scrape = joined(metricsChunks(source, { sliceMs: 1 })).then((t) => (scraped = t));
    let steps = 0;
    while (gates.length > 0 || warmingOf(source) !== undefined) {
      await new Promise((resolve) => setImmediate(resolve));
      // The scrape has not started while the pass holds the columns.
      if (warmingOf(source) !== undefined) expect(scraped).toBeNull();
      gates.shift()?.();
      steps++;
    }
    expect(steps).toBeGreaterThan(2000 / 64 - 1);
    expect(await pass).toEqual({ ran: true, read: 20, full: false });
    expect(await second).toEqual({ ran: false, read: 0, full: false });
    await scrape;
    // It started where the pass ended: nothing read again, nothing read whole.
    expect([cache.lastRead, cache.lastFull]).toEqual([0, false]);
    expect(scraped).toBe(want());
  });

  it('a pass whose reader of the list throws leaves nothing kept: the next scrape reads every check', async () => {
    const source = bigSource(500, true);
    const cache = metricsStateOf(source).cache;
    formatMetrics(source);
    const real = source[checkFiguresList]!;
    source[checkFiguresList] = () => {
      const l = real();
      return { length: l.length, read: (i: number) => { if (i === 250) throw new Error('gone'); return l.read(i); } };
    };
    await expect(warmScrape(source, never, noPause)).rejects.toThrow('gone');
    expect(warmingOf(source)).toBeUndefined();
    expect(cache.views).toBeNull();
    source[checkFiguresList] = real;
    formatMetrics(source);
    expect([cache.lastRead, cache.lastFull]).toEqual([500, true]);
  });

  it('an aborted pass stops at its next pause and lets go of what it kept', async () => {
    const source = bigSource(3000, true);
    const cache = metricsStateOf(source).cache;
    formatMetrics(source);
    source.result('host-5/ping', 0, [{ label: 'only', value: 1, uom: '' }]);
    const abort = new AbortController();
    let pauses = 0;
    const pass = warmScrape(source, () => true, () => {
      if (++pauses === 3) abort.abort();
      return Promise.resolve();
    }, 0, abort.signal);
    expect(await pass).toEqual({ ran: false, read: 0, full: false });
    expect(pauses).toBe(3);
    expect(cache.views).toBeNull();
    expect(await warmScrape(source, never, noPause, 0, abort.signal)).toEqual({ ran: false, read: 0, full: false });
    formatMetrics(source);
    expect([cache.lastRead, cache.lastFull]).toEqual([3000, true]);
  });

  it('forget the perfdata caps of checks removed since, as a scrape does: checks come and go between scrapes and nothing piles up', async () => {
    const source = bigSource(100, true);
    const limit = metricsStateOf(source).limit;
    formatMetrics(source);
    const held = limit.heldLabelChars();
    for (let round = 0; round < 500; round++) {
      const id = `passing-${round}`;
      source.define(id);
      source.result(id, 0, [{ label: `l${round}-${'x'.repeat(100)}`, value: round, uom: '' }]);
      await warmScrape(source, never, noPause);
      source.remove(id);
    }
    await warmScrape(source, never, noPause);
    expect(limit.heldLabelChars()).toBe(held);
  });
});

describe('warm passes and the perfdata caps', () => {
  type Op = { kind: 'result'; check: number; labels: number[]; dup: boolean; long: boolean } | { kind: 'pass' | 'scrape' | 'streamed' };
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 4, arbitrary: fc.record({
      kind: fc.constant('result' as const), check: fc.integer({ min: 0, max: 2 }),
      // Up to 25 labels a result: a check's held sets go past 16 (a Set) and back under (a string).
      labels: fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 25 }), dup: fc.boolean(), long: fc.boolean(),
    }) },
    { weight: 3, arbitrary: fc.constant({ kind: 'pass' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'scrape' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'streamed' as const }) },
  );

  it('admit only what a scrape shows: a result read by passes and replaced before any scrape leaves no label set or drop behind', async () => {
    // The reference reads the source at the scrapes only, as if no pass ran.
    await fc.assert(fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
      const source = bigSource(3, true);
      perfdataLimitOf(source, 20);
      const ref = new PerfdataLimit(20);
      const want = () => renderFamilies(allFamilies, takeSnapshot(source, ref, perfdataExposure(undefined)));
      for (const o of ops) {
        if (o.kind === 'result') {
          const items = o.labels.map((n) => ({ label: `l${n}`, value: n, uom: n % 2 === 0 ? 'ms' : '' }));
          if (o.dup && items.length > 0) items.push({ ...items[0] });
          if (o.long) items.push({ label: 'x'.repeat(300), value: 1, uom: '' });
          source.result(`host-${o.check}/ping`, 0, items);
        } else if (o.kind === 'pass') await warmScrape(source, never, noPause);
        else if (o.kind === 'scrape') expect(formatMetrics(source)).toBe(want());
        else expect(await joined(metricsChunks(source, { sliceMs: 0 }))).toBe(want());
      }
      await warmScrape(source, never, noPause);
      expect(formatMetrics(source)).toBe(want());
    }), { numRuns: 150 });
  });

  it('a check printing 30 new labels every run, read by a pass after each, still shows every result a scrape takes until its cap is full', async () => {
    const source = bigSource(1, true);
    const limit = metricsStateOf(source).limit;
    const labels = (run: number) => Array.from({ length: 30 }, (_, i) => ({ label: `l${i}_${run}`, value: run, uom: '' }));
    let run = 0;
    for (let scrape = 1; scrape <= 5; scrape++) {
      // Four runs between two scrapes, each read by a pass.
      for (let k = 0; k < 4; k++) {
        source.result('host-0/ping', 0, labels(++run));
        await warmScrape(source, never, noPause);
      }
      const text = formatMetrics(source);
      const shown = text.split('\n').filter((l) => l.startsWith('noshell_check_perfdata{')).length;
      // 100 sets hold three scrapes' 30 labels; the fourth shows 10, the fifth none.
      expect([shown, limit.read(source.checkStatus()[0]).labelSets]).toEqual([[30, 30, 30, 10, 0][scrape - 1], Math.min(100, 30 * scrape)]);
    }
  });
});

describe('warm passes and the perfdata caps, outside review', () => {
  const labels = (run: number, n = 30) => Array.from({ length: n }, (_, i) => ({ label: `l${i}_${run}`, value: run, uom: '' }));

  it('a scrape running beside a pass keeps none of what the pass admitted after the scrape began', async () => {
    const source = bigSource(500, true);
    const ref = new PerfdataLimit();
    const want = () => renderFamilies(allFamilies, takeSnapshot(source, ref, perfdataExposure(undefined)));
    source.result('host-0/ping', 0, labels(1));
    expect(formatMetrics(source)).toBe(want());
    // One scrape holds the kept columns; a second (a second Prometheus) reads into columns of its own.
    const first = metricsChunks(source, { sliceMs: 0 });
    await first.next();
    const second = metricsChunks(source, { sliceMs: 0 });
    const secondStarted = second.next();
    // It has read host-0 (the first 64 checks) and paused.
    for (let i = 0; i < 10; i++) await Promise.resolve();
    await first.return(undefined);
    source.result('host-0/ping', 0, labels(2));
    expect((await warmScrape(source, never, noPause)).ran).toBe(true);
    await secondStarted;
    let rest = '';
    for await (const c of second) rest += c;
    // It showed run 1, not run 2.
    expect(rest).not.toContain('l0_2');
    source.result('host-0/ping', 0, labels(3));
    expect(formatMetrics(source)).toBe(want());
    expect(limitHeld(source)).toBe(60);
  });

  it('drop counts handed to a reader never go down: a pass counts in a copy of them', async () => {
    const source = bigSource(1, true);
    perfdataLimitOf(source, 5);
    const limit = metricsStateOf(source).limit;
    const base = [1, 2, 3, 4, 5].map((n) => ({ label: `b${n}`, value: n, uom: '' }));
    source.result('host-0/ping', 0, [...base, { label: 'x'.repeat(300), value: 1, uom: '' }]);
    formatMetrics(source);
    // What a prom-client collector holds until it writes its samples, turns later.
    const held = limit.read(source.checkStatus()[0]).dropped;
    expect({ ...held }).toEqual({ limit: 0, duplicate: 0, tooLong: 1 });
    source.result('host-0/ping', 0, labels(1));
    await warmScrape(source, never, noPause);
    expect({ ...held }).toEqual({ limit: 0, duplicate: 0, tooLong: 1 });
    source.result('host-0/ping', 0, base);
    const text = formatMetrics(source);
    expect(text).toContain('noshell_check_perfdata_dropped_total{check="host-0/ping",reason="limit"} 0');
    expect(text).toContain('noshell_check_perfdata_dropped_total{check="host-0/ping",reason="too_long"} 1');
    expect({ ...held }).toEqual({ limit: 0, duplicate: 0, tooLong: 1 });
  });

  it('a cap or exposure changed between a pass and the next scrape applies to the result the pass read, as to one no pass read', async () => {
    for (const change of ['limit', 'labelBytes', 'exposure'] as const) {
      const source = bigSource(1, true);
      const ref = new PerfdataLimit();
      let exposure = perfdataExposure(undefined);
      const want = () => renderFamilies(allFamilies, takeSnapshot(source, ref, exposure));
      expect(formatMetrics(source)).toBe(want());
      source.result('host-0/ping', 0, [...labels(1), { label: 'y'.repeat(40), value: 1, uom: '' }]);
      await warmScrape(source, never, noPause);
      if (change === 'limit') {
        configureRunnerMetrics(source, { perfdataLimit: 10 });
        ref.limit = 10;
      } else if (change === 'labelBytes') {
        configureRunnerMetrics(source, { perfdataLabelMaxBytes: 20 });
        ref.maxLabelBytes = 20;
      } else {
        configureRunnerMetrics(source, { perfdata: { checks: ['other'] } });
        exposure = perfdataExposure({ checks: ['other'] });
      }
      expect(formatMetrics(source), change).toBe(want());
      if (change === 'exposure') {
        // Exposed again, with a new result: what the caps hold is what a scrape-only reader holds (not the hidden result's sets too).
        source.result('host-0/ping', 0, labels(2));
        configureRunnerMetrics(source, { perfdata: true });
        exposure = perfdataExposure(true);
        expect(formatMetrics(source), change).toBe(want());
      }
    }
  });
});

/** Label sets the runner's caps hold for host-0/ping. */
function limitHeld(source: MetricsSource): number {
  const status = (source as unknown as { checkStatus(): Array<{ id: string }> }).checkStatus().find((c) => c.id === 'host-0/ping')!;
  return metricsStateOf(source).limit.read(status as never).labelSets;
}

describe('serveMetrics refreshMs', () => {
  it('calls a source\'s refresh every refreshMs while served, never with 0; close() aborts a pass in flight without waiting for it', async () => {
    const calls: number[] = [];
    let signal: AbortSignal | null = null;
    let failFirst = true;
    const source = {
      contentType: 'text/plain; version=0.0.4',
      metrics: () => Promise.resolve('x 1\n'),
      refresh: (minAgeMs: number, s: AbortSignal) => {
        calls.push(minAgeMs);
        if (failFirst) {
          failFirst = false;
          return Promise.reject(new Error('first pass fails'));
        }
        signal = s;
        // A pass that never ends.
        return new Promise<void>(() => undefined);
      },
    };
    for (const refreshMs of [-1, Number.NaN, 0.5, null, '1000', 2 ** 31]) {
      await expect(serveMetrics(source, { port: 0, refreshMs: refreshMs as number })).rejects.toThrow(/^refreshMs must be a whole number/);
    }
    await expect(serveMetrics({ ...source, refresh: true as never }, { port: 0 })).rejects.toThrow(/^refresh must be a function, got boolean/);

    const off = await serveMetrics(source, { port: 0, refreshMs: 0 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await off.close();
    expect(calls).toEqual([]);

    const server = await serveMetrics(source, { port: 0, refreshMs: 20 });
    const t0 = performance.now();
    // The first pass fails; the loop goes on to a second, which never ends.
    while (signal === null && performance.now() - t0 < 5000) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(calls).toEqual([10, 10]);
    expect(signal!.aborted).toBe(false);
    await server.close();
    expect(signal!.aborted).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(calls).toHaveLength(2);
  });

  it.runIf(haveDummy)('by default keeps a served CheckRunner read between scrapes: a scrape reads only what changed since the last pass', async () => {
    const runner = new CheckRunner({ concurrency: 8 });
    for (let i = 0; i < 200; i++) runner.add({ id: `c${i}`, command: [DUMMY, String(i % 4), `v${i} | a=${i}ms;5;9;0 b=${i / 7}%`], interval: 2000 });
    const plain: MetricsSource = { stats: () => runner.stats(), checkStatus: () => runner.checkStatus() };
    const cache = metricsStateOf(runner).cache;
    let reported = 0;
    const all = new Promise<void>((resolve) => runner.on('result', () => { if (++reported === 200) resolve(); }));
    const server = await serveMetrics(createRunnerSource(runner), { port: 0 });
    runner.start();
    try {
      await all;
      await runner.stop();
      // A pass that started after the last result: the second to end from now (one may have been in flight).
      const until = async (after: number) => {
        while (!(cache.updatedAt > after) && performance.now() - after < 10_000) await new Promise((resolve) => setTimeout(resolve, 20));
        expect(cache.updatedAt).toBeGreaterThan(after);
        return cache.updatedAt;
      };
      await until(await until(performance.now()));
      const body = await (await fetch(server.url)).text();
      expect([cache.lastRead, cache.lastFull]).toEqual([0, false]);
      const stateLines = (t: string) => t.split('\n').filter((l) => l.includes('{check="'));
      expect(stateLines(body)).toEqual(stateLines(formatMetrics(plain)));
      expect(stateLines(body)).toContain('noshell_check_perfdata{check="c9",label="a",uom="s"} 0.009');
    } finally {
      await server.close();
      await runner.stop();
    }
  });
});
