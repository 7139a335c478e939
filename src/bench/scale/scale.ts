// `noshell bench --scale` (issue 19): a real `noshell run` of 1,000, 10,000
// and 100,000 generated checks, one size after the other, each offering the
// same check rate: by default half of what this machine runs at saturation,
// measured first by the same driver (scale-capacity.ts). `--cli` points the
// same driver at another build (the state before a change), so both are
// measured alike.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatDuration, Progress, type ProgressOptions } from '../progress';
import type { ScaleOptions } from './scale-args';
import { measureCapacity, type Capacity } from './scale-capacity';
import { CHECK_DUMMY } from './scale-checks';
import { measureFull, type FullRow } from './scale-full';
import { measureBaseline, measureSize, SCRAPE_EVERY_MS, WINDOW_MS, type ScaleRow } from './scale-measure';
import { hasLoopDelayReport } from './scale-process';
import { benchRates, describeRate, type BenchRate } from './scale-rates';
import { formatFullTable, formatReloadTable, formatScaleTable, SCALE_NOTES } from './scale-report';

/** "popen-noshell 0.1.0, commit f3b19ba" for the package holding `cli`, as far as can be told. */
function describeCli(cli: string): string {
  const dir = path.dirname(path.dirname(cli));
  let what = path.relative(process.cwd(), cli) || cli;
  try {
    const commit = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    what += ` (commit ${commit}${dirty === '' ? '' : ', with uncommitted changes'})`;
  } catch {
    // Not a git work tree: the path says enough.
  }
  return what;
}

/** "measured capacity 331 results/s (…)", or why it was not measured. */
function describeCapacity(c: Capacity | null): string {
  if (c === null) return 'capacity not measured (--rate and --fill-rate both given)';
  return `measured capacity ${c.resultsPerSec.toFixed(0)} results/s (a noshell run of ${c.checks.toLocaleString('en-US')} checks ` +
    `due every ${c.intervalMs / 1000} s: ${c.results.toLocaleString('en-US')} results in ${(c.countedMs / 1000).toFixed(1)} s after a warm-up)`;
}

export async function runScaleBench(
  o: ScaleOptions, log: (line: string) => void, progressStream?: ProgressOptions['stream'],
): Promise<{ rows: ScaleRow[]; full: FullRow[]; capacity: Capacity | null; rates: { rate: BenchRate; fillRate: BenchRate } }> {
  if (!existsSync(CHECK_DUMMY)) throw new Error(`noshell bench --scale needs ${CHECK_DUMMY} (Debian: apt install monitoring-plugins-basic)`);
  if (!existsSync(o.cli)) throw new Error(`noshell bench --scale: no ${o.cli} (build that package first: npm run build)`);
  // Before anything runs: the calibration loads the machine for a while.
  const load = os.loadavg();
  const startedAt = new Date().toISOString();
  // Both rates given: nothing needs the capacity, and the bench starts at once.
  const calibrate = o.rate === null || o.fillRate === null;
  // Start, scraped, each reload; then the run that fills every check.
  const phases = 3 + o.shares.length;
  const progress = new Progress({
    name: 'bench --scale', groupName: 'size', groups: o.sizes.length + 1 + (calibrate ? 1 : 0),
    units: o.sizes.length * phases + 1 + (calibrate ? 1 : 0),
    ...(progressStream ? { stream: progressStream } : {}),
  });
  // A phase lasts seconds and more: keep the elapsed time moving (this process times nothing on its own loop).
  const refresh = setInterval(() => progress.refresh(), 1000).unref();
  // The pids and directories on stderr: whoever runs this can see that none is left behind.
  const spawned = (pid: number, n: number, dir: string) => progress.note(`noshell run pid ${pid} (${n.toLocaleString('en-US')} check${n === 1 ? '' : 's'} in ${dir})`);
  let capacity: Capacity | null = null;
  let rates: ReturnType<typeof benchRates>;
  const rows: ScaleRow[] = [];
  const full: FullRow[] = [];
  try {
    if (calibrate) {
      progress.beginGroup('the machine\'s capacity (noshell run at saturation)');
      capacity = await measureCapacity(o.cli, WINDOW_MS, spawned);
      progress.unitDone();
      progress.endGroup();
    }
    const c = capacity?.resultsPerSec ?? null;
    rates = benchRates(c, { rate: o.rate, fillRate: o.fillRate });
    const fillRate = rates.fillRate.value;
    // stdout may be the terminal the progress line is on.
    const header = `noshell bench --scale: ${describeCli(o.cli)}; ${describeCapacity(capacity)}; ` +
      `${o.sizes.map((n) => n.toLocaleString('en-US')).join(', ')} checks of \`check_dummy 0 "OK | <5 perfdata values>"\` ` +
      `offering ${describeRate(rates.rate, c)} in all, concurrency 32; ${o.steadyMs / 1000} s scraped every ${SCRAPE_EVERY_MS / 1000} s, ` +
      `then reloads editing ${o.shares.map((s) => `${s * 100} %`).join(' and ')} of the checks; ` +
      `then a run at ${describeRate(rates.fillRate, c)} until every check has reported, scraped 3 times; ` +
      `loop blocks from ${hasLoopDelayReport(o.cli) ? 'its own' : 'a preloaded'} NOSHELL_LOOP_DELAY_REPORT in ${WINDOW_MS} ms windows; ` +
      `${os.cpus().length} cores, Node ${process.version}, load average ${load.map((l) => l.toFixed(2)).join(' ')}, ${startedAt}`;
    progress.around(() => log(header));
    progress.beginGroup('one check (the memory baseline)');
    const base = await measureBaseline(o.cli, spawned);
    progress.unitDone();
    progress.endGroup();
    for (const n of o.sizes) {
      progress.beginGroup(`${n.toLocaleString('en-US')} checks`);
      let first = true;
      rows.push(await measureSize(n, base, {
        ...o,
        rate: rates.rate.value,
        spawned,
        phase: (name) => {
          if (!first) progress.unitDone();
          first = false;
          progress.step(name);
        },
      }));
      progress.unitDone();
      // One interval at the fill rate: at 100,000 checks and ~165/s, ~10 min.
      progress.step(`every check reported (~${formatDuration((n / fillRate) * 1000)} at ${fillRate}/s)`);
      full.push(await measureFull(n, base, { cli: o.cli, fillRate, windowMs: WINDOW_MS, spawned }));
      progress.unitDone();
      progress.endGroup();
    }
  } finally {
    clearInterval(refresh);
    progress.end();
  }
  log(`\n${formatScaleTable(rows)}\n\n${formatReloadTable(rows)}\n\n${formatFullTable(full)}\n\n${SCALE_NOTES}`);
  return { rows, full, capacity, rates };
}
