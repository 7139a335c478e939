// One measurement: a driver running a workload at a concurrency for a time
// budget (tinybench), plus the CPU it cost and the event-loop time blocked.
import { execFile as cpExecFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { Bench } from 'tinybench';
import type { Driver } from './drivers';
import { LoopDelay, type LoopDelayStats } from './loop-delay';

export interface Measurement {
  driver: string;
  workload: string;
  concurrency: number;
  heapMiB: number;
  spawns: number;
  seconds: number;
  spawnsPerSec: number;
  /** CPU of this process (user+sys) per 1,000 operations, ms. */
  parentCpuMsPer1k: number;
  /** CPU of the children (rusage of reaped children) per 1,000 operations, ms. */
  childCpuMsPer1k: number;
  /** Time in the synchronous spawn call, per call, ms; null for the C reference. */
  blockedP50Ms: number | null;
  blockedP99Ms: number | null;
  blockedMaxMs: number | null;
  /** How late a 1 ms timer fired, per tick, over the same window (see
   * loop-delay.ts), ms; null for the C reference and without the timer. */
  loopDelayP50Ms: number | null;
  loopDelayP99Ms: number | null;
  loopDelayMaxMs: number | null;
  /** spawns/s of every round (the reported figures are the median round's). */
  roundsPerSec: number[];
}

const CLK_TCK = 100;

/** User+system CPU of reaped children, from /proc/self/stat (cutime, cstime). */
export function childCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLK_TCK;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export async function measure(
  driver: Driver, workload: { id: string; argv: string[] }, concurrency: number, heapMiB: number, seconds: number, loopDelay = true,
): Promise<Measurement> {
  const blocked: number[] = [];
  const op = driver.make(blocked);
  const argv = workload.argv;
  const bench = new Bench({
    time: seconds * 1000,
    // Sequential: at least one iteration, then the time budget. Concurrent:
    // 0 lifts the iteration cap, so only time and `threshold` limit it.
    iterations: concurrency > 1 ? 0 : 1,
    warmup: true,
    warmupTime: Math.min(200, seconds * 200),
    warmupIterations: concurrency > 1 ? 0 : 5,
    throws: true,
    subtractTimerOverhead: false,
    ...(concurrency > 1 ? { concurrency: 'task' as const, threshold: concurrency } : {}),
  });
  bench.add(driver.id, () => op(argv));

  let cpu0 = process.cpuUsage();
  let kids0 = childCpuMs();
  let t0 = performance.now();
  const task = bench.tasks[0];
  const delay = new LoopDelay();
  task.addEventListener('start', () => {
    blocked.length = 0;
    if (loopDelay) delay.start();
    cpu0 = process.cpuUsage();
    kids0 = childCpuMs();
    t0 = performance.now();
  });
  let loop: LoopDelayStats | null;
  try {
    await bench.run();
  } finally {
    // Stopped on a throw too: a live 1 ms interval would keep the process up.
    const stats = delay.stop();
    loop = loopDelay ? stats : null;
  }
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const kids = childCpuMs() - kids0;
  const result = task.result;
  if (result.state !== 'completed') {
    throw new Error(`${driver.id} on ${workload.id}: ${result.state === 'errored' ? String(result.error) : result.state}`);
  }
  const spawns = result.latency.samplesCount;
  const sorted = blocked.slice().sort((a, b) => a - b);
  return {
    driver: driver.id,
    workload: workload.id,
    concurrency,
    heapMiB,
    spawns,
    seconds: elapsed,
    spawnsPerSec: spawns / elapsed,
    parentCpuMsPer1k: ((cpu.user + cpu.system) / 1000 / spawns) * 1000,
    childCpuMsPer1k: (kids / spawns) * 1000,
    blockedP50Ms: percentile(sorted, 50),
    blockedP99Ms: percentile(sorted, 99),
    blockedMaxMs: sorted.length === 0 ? NaN : sorted[sorted.length - 1],
    loopDelayP50Ms: loop?.p50Ms ?? null,
    loopDelayP99Ms: loop?.p99Ms ?? null,
    loopDelayMaxMs: loop?.maxMs ?? null,
    roundsPerSec: [],
  };
}

/** The C reference loop (bench/reference.c) for the same workload, spawning with glibc's posix_spawn or a plain vfork. */
export async function measureReference(
  binary: string, workload: { id: string; argv: string[] }, concurrency: number, heapMiB: number, seconds: number,
  spawn: 'posix_spawn' | 'vfork' = 'posix_spawn',
): Promise<Measurement> {
  const { stdout } = await promisify(cpExecFile)(binary, [String(seconds), String(concurrency), String(heapMiB), ...workload.argv], {
    env: { ...process.env, REFERENCE_SPAWN: spawn },
  });
  const r = JSON.parse(stdout) as {
    spawn: string; spawns: number; seconds: number; perSecond: number; childUserMs: number; childSysMs: number; selfUserMs: number; selfSysMs: number;
  };
  // A reference built from an older reference.c would not say: measured the wrong loop, refuse.
  if (r.spawn !== spawn) throw new Error(`the C reference loop ran ${String(r.spawn)}, not ${spawn} (rebuild bench/reference.c)`);
  return {
    driver: spawn === 'vfork' ? 'C reference[vfork]' : 'C reference',
    workload: workload.id,
    concurrency,
    heapMiB,
    spawns: r.spawns,
    seconds: r.seconds,
    spawnsPerSec: r.perSecond,
    parentCpuMsPer1k: ((r.selfUserMs + r.selfSysMs) / r.spawns) * 1000,
    childCpuMsPer1k: ((r.childUserMs + r.childSysMs) / r.spawns) * 1000,
    blockedP50Ms: null,
    blockedP99Ms: null,
    blockedMaxMs: null,
    loopDelayP50Ms: null,
    loopDelayP99Ms: null,
    loopDelayMaxMs: null,
    roundsPerSec: [],
  };
}
