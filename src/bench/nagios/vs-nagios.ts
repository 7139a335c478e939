// `noshell bench --vs-nagios`: the same services (one plugin, one interval)
// run by a throwaway Nagios 4 and by CheckRunner, one after the other in each
// round, at an offered load above what the machine can run. Checks/s,
// latency and CPU per check (engine, and total with the plugins) of each,
// and the ratio. Needs nagios4-core and root (Nagios drops to its user).
import { execFileSync, spawn as cpSpawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NAGIOS, nagiosCpu, nagiosResults, startNagios, writeNagiosConfig } from './nagios-instance';
import { Progress, type ProgressOptions } from '../progress';
import type { RunnerLoadArgs, RunnerLoadResult } from './runner-load';

export interface VsNagiosOptions {
  services: number;
  intervalSeconds: number;
  checkWorkers: number[];
  concurrency: number;
  /** CheckRunner's tick, ms (default: noshell run's). */
  tick: number;
  seconds: number;
  warmupSeconds: number;
  rounds: number;
  command: string[];
  /** Results (stdout): the set-up line, the table, the ratio. */
  log: (line: string) => void;
  /** Progress (default stderr). */
  progress?: ProgressOptions['stream'];
}

export interface SideResult {
  engine: string;
  checksPerSec: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** CPU per check: the engine alone (Nagios: main + workers; noshell: the Node process). */
  engineCpuMs: number;
  /** ... and with the plugins. */
  totalCpuMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pct(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function nagiosUser(): { name: string; uid: number; gid: number; group: string } {
  const pw = execFileSync('getent', ['passwd', 'nagios'], { encoding: 'utf8' }).split(':');
  const gid = Number(pw[3]);
  const gr = execFileSync('getent', ['group', String(gid)], { encoding: 'utf8' }).split(':');
  return { name: 'nagios', uid: Number(pw[2]), gid, group: gr[0] };
}

/** Why the comparison cannot run here, or null. */
export function vsNagiosUnavailable(): string | null {
  if (!existsSync(NAGIOS)) return `${NAGIOS} is missing (apt-get install nagios4-core)`;
  if (process.getuid?.() !== 0) return 'Nagios is started as root (it drops to the nagios user): run as root';
  try {
    nagiosUser();
  } catch {
    return 'no nagios user (nagios4-core creates it)';
  }
  return null;
}

async function nagiosSide(o: VsNagiosOptions, workers: number): Promise<SideResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-vs-nagios-'));
  const child = startNagios(writeNagiosConfig({
    dir, services: o.services, intervalSeconds: o.intervalSeconds, command: o.command, checkWorkers: workers, user: nagiosUser(),
  }));
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    await sleep(o.warmupSeconds * 1000);
    if (child.exitCode !== null) throw new Error(`nagios exited (${child.exitCode}): ${stderr.slice(0, 500)}`);
    // Whole seconds: Nagios stamps results with $TIMET$.
    await sleep(1000 - (Date.now() % 1000));
    const from = Math.round(Date.now() / 1000);
    const cpu0 = nagiosCpu(child.pid!);
    await sleep(o.seconds * 1000);
    const to = Math.round(Date.now() / 1000);
    const cpu1 = nagiosCpu(child.pid!);
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000)]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    const latencies = nagiosResults(dir, from, to).sort((a, b) => a - b);
    const n = latencies.length;
    const self = cpu1.selfMs - cpu0.selfMs;
    const total = self + cpu1.childrenMs - cpu0.childrenMs;
    return {
      engine: `Nagios 4 (${workers} workers)`, checksPerSec: n / (to - from), latencyP50Ms: pct(latencies, 50),
      latencyP99Ms: pct(latencies, 99), engineCpuMs: self / n, totalCpuMs: total / n,
    };
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

function noshellName(o: VsNagiosOptions): string {
  return `noshell CheckRunner (concurrency ${o.concurrency}, tick ${o.tick} ms)`;
}

async function noshellSide(o: VsNagiosOptions): Promise<SideResult> {
  const args: RunnerLoadArgs = {
    services: o.services, intervalSeconds: o.intervalSeconds, command: o.command, concurrency: o.concurrency, tick: o.tick,
    warmupSeconds: o.warmupSeconds, seconds: o.seconds,
  };
  const child = cpSpawn(process.execPath, [path.join(__dirname, 'runner-load.js'), JSON.stringify(args)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  if (code !== 0) throw new Error(`runner-load failed (${code}): ${err.slice(0, 500)}`);
  const r = JSON.parse(out.trim().split('\n').pop()!) as RunnerLoadResult;
  const latencies = r.latenciesMs.sort((a, b) => a - b);
  return {
    engine: noshellName(o), checksPerSec: r.checks / r.seconds,
    latencyP50Ms: pct(latencies, 50), latencyP99Ms: pct(latencies, 99),
    engineCpuMs: r.cpu.selfMs / r.checks, totalCpuMs: (r.cpu.selfMs + r.cpu.childrenMs) / r.checks,
  };
}

function median(xs: SideResult[]): SideResult & { roundsPerSec: number[] } {
  const s = xs.slice().sort((a, b) => a.checksPerSec - b.checksPerSec);
  return { ...s[(s.length - 1) >> 1], roundsPerSec: xs.map((x) => x.checksPerSec) };
}

export async function runVsNagios(o: VsNagiosOptions): Promise<SideResult[]> {
  const why = vsNagiosUnavailable();
  if (why !== null) throw new Error(`noshell bench --vs-nagios: ${why}`);
  const offered = o.services / o.intervalSeconds;
  o.log(`noshell bench --vs-nagios: ${o.services} services of \`${o.command.join(' ')}\` every ${o.intervalSeconds} s ` +
    `(${offered.toFixed(0)} checks/s offered), ${os.cpus().length} cores, ${o.rounds} rounds, ` +
    `${o.warmupSeconds} s warm-up + ${o.seconds} s measured per side`);
  const rounds = new Map<string, SideResult[]>();
  const sides = [...o.checkWorkers.map((w) => `Nagios 4 (${w} workers)`), noshellName(o)];
  // Progress on stderr; each round's figures go into the table's rounds column, not a line of their own.
  const progress = new Progress({
    name: 'bench --vs-nagios', groupName: 'round', groups: o.rounds, units: o.rounds * sides.length,
    ...(o.progress ? { stream: o.progress } : {}),
  });
  // A side runs 20 s and more: keep the elapsed time moving (this process times nothing itself).
  const refresh = setInterval(() => progress.refresh(), 1000).unref();
  try {
    for (let round = 0; round < o.rounds; round++) {
      progress.beginGroup(`(${o.warmupSeconds} s warm-up + ${o.seconds} s per side)`);
      for (const [i, side] of sides.entries()) {
        progress.step(side);
        const r = i < o.checkWorkers.length ? await nagiosSide(o, o.checkWorkers[i]) : await noshellSide(o);
        rounds.set(r.engine, [...(rounds.get(r.engine) ?? []), r]);
        progress.unitDone();
      }
      progress.endGroup();
    }
  } finally {
    clearInterval(refresh);
    progress.end();
  }
  const results = [...rounds.values()].map(median);
  const best = results.filter((r) => r.engine.startsWith('Nagios')).sort((a, b) => b.checksPerSec - a.checksPerSec)[0];
  const ours = results.find((r) => r.engine.startsWith('noshell'))!;
  const capacity = os.cpus().length / ours.totalCpuMs * 1000;
  o.log(`\n### ${o.services} services every ${o.intervalSeconds} s (${offered.toFixed(0)} checks/s offered), median of ${o.rounds} rounds\n`);
  o.log('| engine | checks/s | latency p50 ms | latency p99 ms | engine CPU ms/check | total CPU ms/check | rounds (checks/s) |');
  o.log('|---|--:|--:|--:|--:|--:|--:|');
  for (const r of results) {
    o.log(`| ${r.engine} | ${r.checksPerSec.toFixed(0)} | ${r.latencyP50Ms.toFixed(1)} | ${r.latencyP99Ms.toFixed(1)} | ` +
      `${r.engineCpuMs.toFixed(3)} | ${r.totalCpuMs.toFixed(3)} | ${r.roundsPerSec.map((x) => x.toFixed(0)).join(', ')} |`);
  }
  o.log(`\nnoshell / best Nagios: ${(ours.checksPerSec / best.checksPerSec).toFixed(2)}× checks/s; ` +
    `CPU-bound capacity (cores ÷ noshell's total CPU per check) ${capacity.toFixed(0)}/s, reached ${(100 * ours.checksPerSec / capacity).toFixed(0)} %`);
  return results;
}
