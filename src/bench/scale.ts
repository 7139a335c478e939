// `noshell bench --scale` (issue 19): a real `noshell run` of 1,000, 10,000
// and 100,000 generated checks, one size after the other, each offering the
// same check rate. `--cli` points the same driver at another build (the state
// before a change), so both are measured alike.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Progress, type ProgressOptions } from './progress';
import type { ScaleOptions } from './scale-args';
import { CHECK_DUMMY } from './scale-checks';
import { FILL_RATE, measureFull, type FullRow } from './scale-full';
import { measureBaseline, measureSize, SCRAPE_EVERY_MS, WINDOW_MS, type ScaleRow } from './scale-measure';
import { hasLoopDelayReport } from './scale-process';
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

export async function runScaleBench(
  o: ScaleOptions, log: (line: string) => void, progressStream?: ProgressOptions['stream'],
): Promise<{ rows: ScaleRow[]; full: FullRow[] }> {
  if (!existsSync(CHECK_DUMMY)) throw new Error(`noshell bench --scale needs ${CHECK_DUMMY} (Debian: apt install monitoring-plugins-basic)`);
  if (!existsSync(o.cli)) throw new Error(`noshell bench --scale: no ${o.cli} (build that package first: npm run build)`);
  // Start, scraped, each reload; then the run that fills every check.
  const phases = 3 + o.shares.length;
  const progress = new Progress({
    name: 'bench --scale', groupName: 'size', groups: o.sizes.length + 1, units: o.sizes.length * phases + 1,
    ...(progressStream ? { stream: progressStream } : {}),
  });
  log(`noshell bench --scale: ${describeCli(o.cli)}; ${o.sizes.map((n) => n.toLocaleString('en-US')).join(', ')} checks of ` +
    `\`check_dummy 0 "OK | <5 perfdata values>"\` offering ${o.rate} checks/s in all, concurrency 32; ${o.steadyMs / 1000} s scraped ` +
    `every ${SCRAPE_EVERY_MS / 1000} s, then reloads editing ${o.shares.map((s) => `${s * 100} %`).join(' and ')} of the checks; ` +
    `then a run at ${FILL_RATE} checks/s until every check has reported, scraped 3 times; ` +
    `loop blocks from ${hasLoopDelayReport(o.cli) ? 'its own' : 'a preloaded'} NOSHELL_LOOP_DELAY_REPORT in ${WINDOW_MS} ms windows; ` +
    `${os.cpus().length} cores, Node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, ${new Date().toISOString()}`);
  // A phase lasts seconds and more: keep the elapsed time moving (this process times nothing on its own loop).
  const refresh = setInterval(() => progress.refresh(), 1000).unref();
  const rows: ScaleRow[] = [];
  const full: FullRow[] = [];
  // The pids and directories on stderr: whoever runs this can see that none is left behind.
  const spawned = (pid: number, n: number, dir: string) => progress.note(`noshell run pid ${pid} (${n.toLocaleString('en-US')} check${n === 1 ? '' : 's'} in ${dir})`);
  try {
    progress.beginGroup('one check (the memory baseline)');
    const base = await measureBaseline(o.cli, spawned);
    progress.unitDone();
    progress.endGroup();
    for (const n of o.sizes) {
      progress.beginGroup(`${n.toLocaleString('en-US')} checks`);
      let first = true;
      rows.push(await measureSize(n, base, {
        ...o,
        spawned,
        phase: (name) => {
          if (!first) progress.unitDone();
          first = false;
          progress.step(name);
        },
      }));
      progress.unitDone();
      progress.step('every check reported');
      full.push(await measureFull(n, base, { cli: o.cli, windowMs: WINDOW_MS, spawned }));
      progress.unitDone();
      progress.endGroup();
    }
  } finally {
    clearInterval(refresh);
    progress.end();
  }
  log(`\n${formatScaleTable(rows)}\n\n${formatReloadTable(rows)}\n\n${formatFullTable(full)}\n\n${SCALE_NOTES}`);
  return { rows, full };
}
