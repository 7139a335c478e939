// The CPU hogs of --load (src/bench/cpu-hogs.ts): they burn CPU while the
// benchmark runs, and none outlives it: not after a SIGKILL of the
// benchmark, nor when the benchmark dies while a hog is still starting.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hogArgs } from '../../src/bench/cpu-hogs';
import { waitFor } from '../helpers';

const ROOT = path.resolve(__dirname, '..', '..');
const HOGS = JSON.stringify(path.join(ROOT, 'dist', 'bench', 'cpu-hogs.js'));

/** utime+stime of a process, in clock ticks; null once it is gone. */
function cpuTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return f[0] === 'Z' ? null : Number(f[11]) + Number(f[12]);
  } catch {
    return null;
  }
}

/** Runs a benchmark stand-in that starts hogs and prints their pids; resolves with them and the process. */
async function benchmark(then: string) {
  const script = `require(${HOGS}).startHogs(2).then((h) => { console.log(JSON.stringify(h.pids)); ${then} });`;
  const bench = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  bench.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  expect(await waitFor(() => out.includes(']'), 20_000)).toBe(true);
  return { bench, hogs: JSON.parse(out) as number[] };
}

describe('cpu hogs', () => {
  it('burn CPU, and leave when the benchmark is killed', async () => {
    const { bench, hogs } = await benchmark('setInterval(() => {}, 1000);');
    expect(hogs).toHaveLength(2);
    // Started: each is a child of the benchmark.
    expect(readFileSync(`/proc/${bench.pid}/task/${bench.pid}/children`, 'utf8').trim().split(' ').map(Number).sort()).toEqual([...hogs].sort());
    await new Promise((r) => setTimeout(r, 300));
    const before = hogs.map((p) => cpuTicks(p)!);
    await new Promise((r) => setTimeout(r, 500));
    // Each burns CPU all along (a full core would be 50 ticks in the 0.5 s; the
    // bound leaves room for a machine busy with other tests).
    hogs.forEach((p, i) => expect(cpuTicks(p)! - before[i]).toBeGreaterThan(5));
    bench.kill('SIGKILL');
    expect(await waitFor(() => hogs.every((p) => cpuTicks(p) === null), 5000)).toBe(true);
  }, 30_000);

  it('leave when the benchmark dies before they have started up', async () => {
    // The benchmark SIGKILLs itself as soon as the hogs exist, while their Node still boots.
    const { hogs } = await benchmark("process.kill(process.pid, 'SIGKILL');");
    expect(await waitFor(() => hogs.every((p) => cpuTicks(p) === null), 5000)).toBe(true);
    // What decides it: a hog whose parent is not the benchmark it was given leaves at once,
    // whenever it looks (a hog that took its parent's pid only once started would stay).
    const r = spawnSync(process.execPath, hogArgs(1), { timeout: 10_000 });
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
  }, 30_000);
});
