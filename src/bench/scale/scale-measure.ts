// One size of `noshell bench --scale`: a `noshell run` of N generated checks,
// started, left to settle, scraped every 5 s for a while, then reloaded twice
// (1 % and 10 % of the checks edited), then stopped. Every figure is read
// from outside (stderr lines, result lines, /proc, the scrape's own timing)
// except the loop blocks, which only the process can see (loop-delay-report.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { editChecks, initialChecks, intervalFor, writeChecksFile, type ScaleEdit } from './scale-checks';
import { blockIn, ownBlockIn, latencyOf, reloadCounts, type Latency } from './scale-figures';
import { ScaleProcess, type TimedWindow } from './scale-process';
import { scrape, type Scrape } from './scale-scrape';

export const WINDOW_MS = 100;
export const SCRAPE_EVERY_MS = 5000;
const WARMUP_MS = 3000;
const SETTLE_MS = 2000;
const START_TIMEOUT_MS = 180_000;
const RELOAD_TIMEOUT_MS = 120_000;
const SCRAPE_TIMEOUT_MS = 60_000;
const DRAIN_TIMEOUT_MS = 60_000;

export interface ReloadFigures {
  share: number;
  expected: ScaleEdit;
  /** What noshell's "reloaded" line counted; null when it did not come. */
  counted: ScaleEdit | null;
  /** SIGHUP to the "reloaded" line; null when it did not come in time. */
  wallMs: number | null;
  blockMs: number;
  /** The loop reported nothing after the reload began: blocked for blockMs at least. */
  blockAtLeast: boolean;
  /** Checks due between the SIGHUP and the "reloaded" line. */
  latency: Latency;
  /**
   * CPU time from the SIGHUP to the "reloaded" line, ms: noshell run's own
   * (the reload and the checks' scheduling) and its checks' (the plugins it
   * ran meanwhile); null when the reload did not finish or /proc had none.
   */
  cpu: { ownMs: number; childrenMs: number } | null;
  error: string | null;
}

export interface ScaleRow {
  checks: number;
  intervalMs: number;
  /** Spawn to the "N checks from" line (the runner started). */
  startMs: number;
  rssMiB: number;
  peakRssMiB: number;
  /** Above a noshell run of one check. */
  rssPerCheckKiB: number;
  heapMiB: number;
  heapPerCheckKiB: number;
  scrapes: Scrape[];
  scrapeMedianMs: number;
  scrapeMaxMs: number;
  scrapeMiB: number;
  /** The longest loop block in windows ending during a scrape, and in the rest of the scraped period. */
  scrapeBlockMs: number;
  /** scrapeBlockMs's windows' longest block of the loop's own, its wait for a CPU left out (NaN: not reported). */
  scrapeOwnBlockMs: number;
  otherBlockMs: number;
  /** Checks due in the scraped period. */
  latency: Latency;
  reloads: ReloadFigures[];
  /**
   * Whether every check due before the stop had started by then. Stopping
   * drops the queued ones, and with them the latest starts: when false, the
   * latencies are from those that did start, a lower bound.
   */
  drained: boolean;
}

export interface Baseline {
  rssKiB: number;
  heapBytes: number;
}

export interface ScaleRunOptions {
  cli: string;
  rate: number;
  steadyMs: number;
  shares: number[];
  /** Called as each phase begins: "start", "scraped", "reload 1 %". */
  phase: (name: string) => void;
  /** Called with each noshell run started, and the directory of its checks file. */
  spawned: (pid: number, checks: number, dir: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tempDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'noshell-bench-scale-'));
}

/** RSS and heap of a noshell run of one check, a second after its start. */
export async function measureBaseline(cli: string, spawned: ScaleRunOptions['spawned']): Promise<Baseline> {
  const dir = tempDir();
  const file = path.join(dir, 'checks.json');
  writeChecksFile(file, initialChecks(1), 60_000);
  const p = new ScaleProcess(cli, file, WINDOW_MS);
  spawned(p.pid, 1, dir);
  try {
    await p.waitLine((l) => l.includes(' checks from ') || l.includes(' check from '), START_TIMEOUT_MS, 'start');
    await sleep(1000);
    return { rssKiB: p.memory().rssKiB, heapBytes: p.heapUsed() };
  } finally {
    await p.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface ReloadSpan {
  share: number;
  expected: ScaleEdit;
  counted: ScaleEdit | null;
  from: number;
  /** When the "reloaded" line came; null when it did not. */
  to: number | null;
  cpu: ReloadFigures['cpu'];
  error: string | null;
}

async function reloadOnce(p: ScaleProcess, o: { share: number; expected: ScaleEdit }): Promise<ReloadSpan> {
  const from = Date.now();
  const reloaded = p.waitLine((l) => l.startsWith('noshell run: reloaded ') || l.startsWith('noshell run: reload of '), RELOAD_TIMEOUT_MS, 'reload');
  const before = p.cpuTimes();
  p.child.kill('SIGHUP');
  try {
    const line = await reloaded;
    const after = p.cpuTimes();
    const cpu = before === null || after === null ? null : { ownMs: after.ownMs - before.ownMs, childrenMs: after.childrenMs - before.childrenMs };
    const counted = reloadCounts(line.text);
    return { ...o, counted, from, to: line.at, cpu, error: counted === null ? line.text : null };
  } catch (e) {
    return { ...o, counted: null, from, to: null, cpu: null, error: (e as Error).message.replace('noshell bench --scale: ', '') };
  }
}

/**
 * A reload's figures, read once everything it caused has been reported (the
 * window a block ends in comes after the block, a due check's result after
 * its run). One that never finished ran until `stoppedAt`; with no window at
 * all since it began, the loop was blocked all that time.
 */
function reloadFigures(p: ScaleProcess, r: ReloadSpan, stoppedAt: number): ReloadFigures {
  const to = r.to ?? stoppedAt;
  const silent = r.to === null && !p.windows.some((w) => w.at > r.from);
  return {
    share: r.share, expected: r.expected, counted: r.counted, wallMs: r.to === null ? null : r.to - r.from,
    blockMs: silent ? stoppedAt - r.from : blockIn(p.windows, r.from, to), blockAtLeast: silent,
    latency: latencyOf(p.results, r.from, to), cpu: r.cpu, error: r.error,
  };
}

export async function measureSize(n: number, base: Baseline, o: ScaleRunOptions): Promise<ScaleRow> {
  const dir = tempDir();
  const file = path.join(dir, 'checks.json');
  const intervalMs = intervalFor(n, o.rate);
  let checks = initialChecks(n);
  writeChecksFile(file, checks, intervalMs);
  o.phase('start');
  const p = new ScaleProcess(o.cli, file, WINDOW_MS);
  o.spawned(p.pid, n, dir);
  try {
    const metrics = p.waitLine((l) => l.startsWith('noshell run: metrics on '), START_TIMEOUT_MS, 'metrics address');
    const started = await p.waitLine((l) => l.includes(' checks from ') || l.includes(' check from '), START_TIMEOUT_MS, 'start');
    const startMs = started.at - p.spawnedAt;
    const url = (await metrics).text.slice('noshell run: metrics on '.length).trim();
    await sleep(WARMUP_MS);

    o.phase('scraped');
    const from = Date.now();
    const scrapes: Scrape[] = [];
    for (let k = 0; k * SCRAPE_EVERY_MS < o.steadyMs; k++) {
      await sleep(Math.max(0, from + k * SCRAPE_EVERY_MS - Date.now()));
      scrapes.push(await scrape(url, SCRAPE_TIMEOUT_MS));
    }
    await sleep(Math.max(0, from + o.steadyMs - Date.now()));
    const to = Date.now();
    const mem = p.memory();
    const heap = p.heapUsed();

    const reloads: ReloadSpan[] = [];
    for (const share of o.shares) {
      o.phase(`reload ${share * 100} %`);
      // After a reload that never finished the process is still busy with it: the next would only queue.
      if (reloads.some((r) => r.to === null)) break;
      const next = editChecks(checks, share, `r${reloads.length + 1}`);
      checks = next.checks;
      writeChecksFile(file, checks, intervalMs);
      reloads.push(await reloadOnce(p, { share, expected: next.edit }));
      await sleep(SETTLE_MS);
    }
    // Due checks start in due order: once one due after the last phase has
    // started, every one due before it has. Only then is stopping harmless.
    const last = Date.now();
    while (p.lastScheduledAt <= last && Date.now() - last < DRAIN_TIMEOUT_MS) await sleep(100);
    const drained = p.lastScheduledAt > last;
    await p.stop();
    const stoppedAt = Date.now();

    const ok = scrapes.filter((s) => s.error === null);
    const times = ok.map((s) => s.ms).sort((a, b) => a - b);
    const during = (w: TimedWindow) => scrapes.some((s) => w.at >= s.startAt && w.at <= s.endAt + w.windowMs);
    return {
      checks: n, intervalMs, startMs, rssMiB: mem.rssKiB / 1024, peakRssMiB: mem.hwmKiB / 1024,
      rssPerCheckKiB: (mem.rssKiB - base.rssKiB) / n, heapMiB: heap / 2 ** 20, heapPerCheckKiB: (heap - base.heapBytes) / 1024 / n,
      scrapes, scrapeMedianMs: times.length === 0 ? NaN : times[(times.length - 1) >> 1], scrapeMaxMs: times.at(-1) ?? NaN,
      scrapeMiB: (ok.at(-1)?.bytes ?? NaN) / 2 ** 20,
      scrapeBlockMs: Math.max(0, ...scrapes.map((s) => blockIn(p.windows, s.startAt, s.endAt))),
      scrapeOwnBlockMs: Math.max(0, ...scrapes.map((s) => ownBlockIn(p.windows, s.startAt, s.endAt))),
      // NaN when the scrapes took the whole period.
      otherBlockMs: Math.max(-Infinity, ...p.windows.filter((w) => w.at >= from && w.at <= to && !during(w)).map((w) => w.maxMs)),
      latency: latencyOf(p.results, from, to), reloads: reloads.map((r) => reloadFigures(p, r, stoppedAt)), drained,
    };
  } finally {
    await p.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
