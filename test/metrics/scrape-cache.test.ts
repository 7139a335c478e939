// A runner's scrapes read again only the checks that changed since the last
// one (scrape-cache.ts, issue 19), and give the text a scrape that reads
// every check gives: a FakeSource read as a CheckRunner is, and a real
// CheckRunner running check_dummy.
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it, vi } from 'vitest';
import { allFamilies, formatMetrics, metricsBytes, metricsChunks, renderFamilies } from '../../src/metrics/scrape/runner-text';
import { perfdataExposure } from '../../src/metrics/model/metrics-options';
import { takeSnapshot, type MetricsSource } from '../../src/metrics/model/metrics-snapshot';
import { configureRunnerMetrics, metricsStateOf } from '../../src/metrics/scrape/metrics-state';
import { PerfdataLimit, perfdataLimitOf } from '../../src/metrics/model/perfdata-limit';
import { ScrapeColumns } from '../../src/metrics/scrape/scrape-columns';
import type { PerfDatum } from '../../src/check/plugin/perfdata';
import { CheckRunner } from '../../src/index';
import { bigSource, fivePerfdata } from './metrics-source';

const DUMMY = '/usr/lib/nagios/plugins/check_dummy';
const haveDummy = existsSync(DUMMY);
if (!haveDummy) {
  if (process.env.NOSHELL_REQUIRE_PEERS) throw new Error('monitoring-plugins-basic is required here');
  console.warn('skipped: scrape cache with a real runner: monitoring-plugins-basic is not installed');
}

async function joined(chunks: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const c of chunks) text += c;
  return text;
}

const cacheOf = (source: object) => metricsStateOf(source).cache;

describe('scrapes of a runner', () => {
  it('read again only the checks whose result, running flag, definition or exposure changed, and give what a full read gives', async () => {
    const source = bigSource(2000, true);
    const ref = new PerfdataLimit();
    let exposure = perfdataExposure(undefined);
    const want = () => renderFamilies(allFamilies, takeSnapshot(source, ref, exposure));
    const cache = cacheOf(source);
    const scrape = (how: 'sync' | 'chunks') => (how === 'sync' ? Promise.resolve(formatMetrics(source)) : joined(metricsChunks(source, { sliceMs: 1 })));

    expect(await scrape('sync')).toBe(want());
    expect([cache.lastRead, cache.lastFull]).toEqual([2000, true]);
    const first = await scrape('chunks');
    expect(first).toBe(want());
    expect([cache.lastRead, cache.lastFull]).toEqual([0, false]);

    // Ten new results of the same shape: read again, copied over their old places.
    for (let i = 0; i < 2000; i += 200) source.result(`host-${i}/ping`, 2, fivePerfdata(i + 7));
    source.setRunning('host-5/ping', true);
    const changed = await scrape('chunks');
    expect(changed).toBe(want());
    expect(changed).not.toBe(first);
    expect(changed).toContain('noshell_check_running{check="host-5/ping"} 1');
    expect([cache.lastRead, cache.lastFull]).toEqual([11, false]);

    // A result with other items, checks removed (first, middle, last) and added: the rest are copied.
    source.result('host-3/ping', 0, [{ label: 'only', value: 1 / 3, uom: 's' }]);
    for (const i of [0, 1000, 1999]) source.remove(`host-${i}/ping`);
    source.define('new-1');
    source.define('new-2');
    source.result('new-2', 1, fivePerfdata(1));
    expect(await scrape('sync')).toBe(want());
    expect([cache.lastRead, cache.lastFull]).toEqual([3, false]);
    expect(await scrape('chunks')).toBe(want());
    expect(cache.lastRead).toBe(0);

    // A check re-added (a new definition, last in order) and one whose definition now exposes no series.
    source.remove('host-10/ping');
    source.define('host-10/ping', { interval: 5000 });
    source.define('host-11/ping', { metrics: false });
    const text = await scrape('chunks');
    expect(text).toBe(want());
    expect(text).not.toContain('"host-11/ping"');
    expect(text).toContain('noshell_check_interval_seconds{check="host-10/ping"} 5');
    expect([cache.lastRead, cache.lastFull]).toEqual([1, false]);

    // Other exposure: everything is read again.
    configureRunnerMetrics(source, { perfdata: { labels: ['rta'] } });
    exposure = perfdataExposure({ labels: ['rta'] });
    expect(await scrape('sync')).toBe(want());
    expect([cache.lastRead, cache.lastFull]).toEqual([1999, true]);
    // All removed.
    for (const id of [...source.checks.keys()]) source.remove(id);
    expect(await scrape('chunks')).toBe(want());
    expect(cache.lastRead).toBe(0);
  });

  it('copy the unchanged checks in runs when one changes shape, not one at a time', async () => {
    const source = bigSource(5000, true);
    const ref = new PerfdataLimit();
    const want = () => renderFamilies(allFamilies, takeSnapshot(source, ref, perfdataExposure(undefined)));
    expect(await joined(metricsChunks(source, { sliceMs: 1 }))).toBe(want());
    // One item where it had five: it and every check after it go into a second set of columns.
    source.result('host-2500/ping', 0, [{ label: 'only', value: 1, uom: '' }]);
    const runs: number[] = [];
    const appendRun = ScrapeColumns.prototype.appendRun;
    const spy = vi.spyOn(ScrapeColumns.prototype, 'appendRun').mockImplementation(function (this: ScrapeColumns, from, j0, j1) {
      runs.push(j1 - j0);
      appendRun.call(this, from, j0, j1);
    });
    try {
      expect(await joined(metricsChunks(source, { sliceMs: 1 }))).toBe(want());
    } finally {
      spy.mockRestore();
    }
    expect(cacheOf(source).lastRead).toBe(1);
    // 2,500 + 2,499 copied, in runs of at most 2,048 (and the changed check, read on its own); each was one run of 1.
    expect(runs.reduce((a, b) => a + b, 0)).toBe(5000);
    expect(runs.length).toBeLessThanOrEqual(6);
  });

  it('keep their text to at most about twice what a full read makes: past it, the next scrape reads every check into new text', () => {
    const source = bigSource(3000, true);
    const ref = new PerfdataLimit();
    const cache = cacheOf(source);
    const exposure = perfdataExposure(undefined);
    expect(formatMetrics(source)).toBe(renderFamilies(allFamilies, takeSnapshot(source, ref, exposure)));
    const full = cache.views!.text.count;
    // Each result's values are thirds: each is a piece of its own text, and the old ones are left unused.
    const thirds = (k: number): PerfDatum[] => [1, 2, 4, 5, 7].map((v, i) => ({ label: `p${i}`, value: (v + 3 * k) / 3, uom: '' }));
    let rounds = 0;
    let most = 0;
    for (let k = 1; k <= 20 && !(rounds > 0 && cache.lastFull); k++) {
      for (const id of source.checks.keys()) source.result(id, 0, thirds(k));
      const text = formatMetrics(source);
      if (k === 1 || k % 4 === 0) expect(text).toBe(renderFamilies(allFamilies, takeSnapshot(source, ref, exposure)));
      else takeSnapshot(source, ref, exposure);
      most = Math.max(most, cache.views!.text.count);
      rounds = k;
    }
    expect(cache.lastFull).toBe(true);
    expect(rounds).toBeGreaterThan(2);
    expect(most).toBeLessThanOrEqual(2 * full + 65_536 + 3000 * 5);
    expect(cache.views!.text.count).toBeLessThan(full + 3000 * 5 + 100);
  });

  it('a change of exposure while every check is read applies from the next scrape (the full read is not kept as made under it)', async () => {
    const source = bigSource(200, true);
    const ref = new PerfdataLimit();
    const it = metricsBytes(source, { sliceMs: 0 });
    // Paused part way through reading the checks.
    const first = it.next();
    configureRunnerMetrics(source, { perfdata: false });
    await first;
    for (let r = await it.next(); r.done !== true; r = await it.next());
    const off = perfdataExposure(false);
    for (let k = 0; k < 3; k++) {
      source.result(`host-${k}/ping`, 1, fivePerfdata(k + 100));
      const text = formatMetrics(source);
      expect(text).toBe(renderFamilies(allFamilies, takeSnapshot(source, ref, off)));
      expect(text).not.toContain('noshell_check_perfdata{');
    }
  });

  it('a sliced scrape dropped unfinished (no return()) does not keep the next ones from the kept columns once collected', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const source = bigSource(500, true);
    const cache = cacheOf(source);
    formatMetrics(source);
    await (async () => {
      const dropped = metricsBytes(source, { sliceMs: 0, chunkBytes: 100 });
      await dropped.next();
    })();
    // While it may still be read on, another scrape reads everything into columns of its own.
    formatMetrics(source);
    for (let k = 0; k < 10 && cache.owner !== null && cache.owner.deref() !== undefined; k++) {
      await new Promise((r) => setImmediate(r));
      gc();
    }
    expect(cache.owner?.deref()).toBeUndefined();
    const ref = new PerfdataLimit();
    const exposure = perfdataExposure(undefined);
    expect(formatMetrics(source)).toBe(renderFamilies(allFamilies, takeSnapshot(source, ref, exposure)));
    expect(cache.lastFull).toBe(true);
    expect(formatMetrics(source)).toBe(renderFamilies(allFamilies, takeSnapshot(source, ref, exposure)));
    expect([cache.lastRead, cache.lastFull, cache.owner]).toEqual([0, false, null]);
  });

  it('keep their text to about twice the bytes of a full read: a 1 MiB id gone from a scrape and back in the next, forty times', () => {
    const source = bigSource(10, true);
    const cache = cacheOf(source);
    const big = 'x'.repeat(1 << 20);
    let most = 0;
    let full = 0;
    for (let k = 0; k < 40; k++) {
      // Gone for one scrape, back in the next: its id is a new piece each time.
      source.remove(big);
      formatMetrics(source);
      if (k > 0 && cache.lastFull) full++;
      source.define(big);
      formatMetrics(source);
      if (cache.lastFull) full++;
      most = Math.max(most, cache.views!.text.bytes);
    }
    expect(full).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(2 * ((1 << 20) + 2000) + 16 * 2 ** 20 + (1 << 20) + 100);
  });

  it.runIf(haveDummy)('of a real CheckRunner read only what changed, and equal a full read of the same runner', async () => {
    const runner = new CheckRunner({ concurrency: 8 });
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) {
      ids.push(`c${i}`);
      // First runs are spread over the interval: all within 3 s.
      runner.add({ id: `c${i}`, command: [DUMMY, String(i % 3), `v${i} | a=${i}ms;5;9;0 b=${i / 7}%`], interval: 3000 });
    }
    // The same runner seen as a plain source: every scrape reads all of it.
    const plain: MetricsSource = { stats: () => runner.stats(), checkStatus: () => runner.checkStatus() };
    const cache = cacheOf(runner);
    let reported = 0;
    const all = new Promise<void>((resolve) => runner.on('result', () => { if (++reported === ids.length) resolve(); }));
    runner.start();
    try {
      await all;
      // Stopped: no result comes between two scrapes.
      await runner.stop();
      // The per-check series (the runner's own, such as its rate, move with the clock).
      const stateLines = (t: string) => t.split('\n').filter((l) => l.includes('{check="'));
      const a = runner.metrics();
      expect(cache.lastFull).toBe(true);
      expect(stateLines(a)).toEqual(stateLines(formatMetrics(plain)));
      expect(a).toContain('noshell_check_perfdata{check="c7",label="a",uom="s"} 0.007');
      const b = await joined(runner.metricsChunks());
      expect([cache.lastRead, cache.lastFull]).toEqual([0, false]);
      expect(stateLines(b)).toEqual(stateLines(a));
      runner.remove('c3');
      runner.add({ id: 'late', command: [DUMMY, '2', 'late | x=1'], interval: 3_600_000 });
      const c = runner.metrics();
      expect(cache.lastRead).toBe(1);
      expect(stateLines(c)).toEqual(stateLines(formatMetrics(plain)));
      expect(c).not.toContain('check="c3"');
      expect(c).toContain('noshell_check_interval_seconds{check="late"} 3600');
      // A streamed scrape reads the runner's list into one object, and keeps the caps of the checks the runner
      // still has: a removed check's are forgotten, every other check's kept.
      const limit = perfdataLimitOf(runner);
      const held = limit.heldLabelChars();
      runner.remove('c4');
      const d = await joined(runner.metricsChunks({ sliceMs: 0 }));
      expect(d).not.toContain('check="c4"');
      // What the caps held for c4: its two label sets, each "<length>:<label><base unit>".
      const sets = c.split('\n').filter((l) => l.startsWith('noshell_check_perfdata{check="c4",'))
        .map((l) => /label="([^"]*)",uom="([^"]*)"/.exec(l)!).map(([, label, uom]) => `${label.length}:${label}${uom}`);
      expect(sets).toHaveLength(2);
      expect(held - limit.heldLabelChars()).toBe(sets.join('').length);
      expect(stateLines(d)).toEqual(stateLines(formatMetrics(plain)));
    } finally {
      await runner.stop();
    }
  });
});
