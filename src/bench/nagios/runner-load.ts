// One side of `noshell bench --vs-nagios`, run in its own Node process so its
// CPU (this process: event loop + executor; its children: the plugins) is
// measured from /proc exactly like the Nagios side's. Argument: a JSON
// RunnerLoadArgs. Prints one JSON RunnerLoadResult line.
import { readFileSync } from 'node:fs';
import { CheckRunner } from '../../check/runner/runner';
import type { CheckRunResult } from '../../check/model/definition';

export interface RunnerLoadArgs {
  services: number;
  /** s between runs of one check (Nagios: check_interval with interval_length=1). */
  intervalSeconds: number;
  command: string[];
  concurrency: number;
  /** CheckRunner's tick in ms (0: none). */
  tick?: number | undefined;
  warmupSeconds: number;
  seconds: number;
}

export interface ProcCpu {
  /** ms of user+system CPU of the process itself (all its threads). */
  selfMs: number;
  /** ms of user+system CPU of its reaped children. */
  childrenMs: number;
}

export interface RunnerLoadResult {
  checks: number;
  seconds: number;
  latenciesMs: number[];
  cpu: ProcCpu;
  skipped: number;
}

const CLK_TCK = 100;

/** utime+stime and cutime+cstime of a pid from /proc (ms). */
export function procCpu(pid: number | 'self'): ProcCpu {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ms = (i: number) => (Number(f[i]) * 1000) / CLK_TCK;
  return { selfMs: ms(11) + ms(12), childrenMs: ms(13) + ms(14) };
}

export async function runnerLoad(a: RunnerLoadArgs): Promise<RunnerLoadResult> {
  const runner = new CheckRunner({ concurrency: a.concurrency, tick: a.tick, timeout: 10_000 });
  for (let i = 0; i < a.services; i++) {
    runner.add({ id: `svc${i}`, command: a.command, interval: a.intervalSeconds * 1000 });
  }
  let counting = false;
  let checks = 0;
  const latenciesMs: number[] = [];
  runner.on('result', (r: CheckRunResult) => {
    if (!counting) return;
    checks++;
    latenciesMs.push(r.latencyMs);
  });
  runner.start();
  await new Promise((r) => setTimeout(r, a.warmupSeconds * 1000));
  const skipped0 = runner.stats().skipped;
  const cpu0 = procCpu('self');
  const t0 = performance.now();
  counting = true;
  await new Promise((r) => setTimeout(r, a.seconds * 1000));
  counting = false;
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = procCpu('self');
  const skipped = runner.stats().skipped - skipped0;
  await runner.stop({ deadline: 2000 });
  return {
    checks, seconds, latenciesMs, skipped,
    cpu: { selfMs: cpu1.selfMs - cpu0.selfMs, childrenMs: cpu1.childrenMs - cpu0.childrenMs },
  };
}

if (require.main === module) {
  runnerLoad(JSON.parse(process.argv[2]) as RunnerLoadArgs).then((r) => {
    process.stdout.write(`${JSON.stringify(r)}\n`);
  }, (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  });
}
