// The "every check reported" phase of `noshell bench --scale`: the main
// phase's checks run once every N / rate s, so when it is scraped only a
// tenth of 100,000 checks have a result and their perfdata series. Here a
// second `noshell run` of the same N checks runs them at the fill rate (one
// interval of N / fillRate s; by default half the machine's measured
// capacity, at most 800/s: scale-rates.ts) until every one has reported once,
// then is scraped three times, 5 s apart: memory and scrapes at full size.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { initialChecks, intervalFor, writeChecksFile } from './scale-checks';
import { blockIn, ownBlockIn } from './scale-figures';
import { ScaleProcess } from './scale-process';
import { scrape, type Scrape } from './scale-scrape';
import type { Baseline } from './scale-measure';

const SCRAPES = 3;
const SCRAPE_GAP_MS = 5000;
const START_TIMEOUT_MS = 180_000;
const SCRAPE_TIMEOUT_MS = 60_000;

export interface FullRow {
  checks: number;
  /** Checks/s the N checks offered together. */
  fillRate: number;
  /** Start to the N-th result line. */
  fillMs: number;
  /** Whether all N reported within three intervals (else the figures are at fewer). */
  filled: boolean;
  results: number;
  rssMiB: number;
  peakRssMiB: number;
  heapMiB: number;
  /** Above a noshell run of one check. */
  heapPerCheckKiB: number;
  scrapes: Scrape[];
  scrapeBlockMs: number;
  /** Its windows' longest block of the loop's own, its wait for a CPU left out (NaN: not reported). */
  scrapeOwnBlockMs: number;
  /**
   * Over the scrapes (request to last byte), the event-loop thread's time
   * on a CPU and waiting for one, ms (NaN: not known here). A block can be
   * work, or the thread runnable while the CPUs run others (the checks).
   */
  loopCpuMs: number;
  loopWaitMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function measureFull(
  n: number, base: Baseline,
  o: { cli: string; fillRate: number; windowMs: number; spawned: (pid: number, checks: number, dir: string) => void },
): Promise<FullRow> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-bench-scale-'));
  const file = path.join(dir, 'checks.json');
  const intervalMs = intervalFor(n, o.fillRate);
  writeChecksFile(file, initialChecks(n), intervalMs);
  const p = new ScaleProcess(o.cli, file, o.windowMs);
  o.spawned(p.pid, n, dir);
  try {
    const metrics = p.waitLine((l) => l.startsWith('noshell run: metrics on '), START_TIMEOUT_MS, 'metrics address');
    await p.waitLine((l) => l.includes(' checks from ') || l.includes(' check from '), START_TIMEOUT_MS, 'start');
    const url = (await metrics).text.slice('noshell run: metrics on '.length).trim();
    const from = Date.now();
    // At a fill rate within the capacity N take one interval; three leave room for a slower
    // machine or a given rate above what it runs (then the figures are at fewer, and say so).
    while (p.results.length < n && Date.now() - from < 3 * intervalMs + 10_000) await sleep(100);
    const fillMs = Date.now() - from;
    const scrapes: Scrape[] = [];
    let loopCpuMs = 0;
    let loopWaitMs = 0;
    for (let k = 0; k < SCRAPES; k++) {
      if (k > 0) await sleep(SCRAPE_GAP_MS);
      const before = p.loopThreadSched();
      scrapes.push(await scrape(url, SCRAPE_TIMEOUT_MS));
      const after = p.loopThreadSched();
      loopCpuMs += before === null || after === null ? NaN : after.cpuMs - before.cpuMs;
      loopWaitMs += before === null || after === null ? NaN : after.waitMs - before.waitMs;
    }
    // The last window after the last scrape: its block is reported a window later.
    await sleep(2 * o.windowMs);
    const mem = p.memory();
    const heap = p.heapUsed();
    return {
      checks: n, fillRate: o.fillRate, fillMs, filled: p.results.length >= n, results: p.results.length, rssMiB: mem.rssKiB / 1024,
      peakRssMiB: mem.hwmKiB / 1024, heapMiB: heap / 2 ** 20, heapPerCheckKiB: (heap - base.heapBytes) / 1024 / n, scrapes,
      scrapeBlockMs: Math.max(0, ...scrapes.map((s) => blockIn(p.windows, s.startAt, s.endAt))),
      scrapeOwnBlockMs: Math.max(0, ...scrapes.map((s) => ownBlockIn(p.windows, s.startAt, s.endAt))), loopCpuMs, loopWaitMs,
    };
  } finally {
    await p.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
