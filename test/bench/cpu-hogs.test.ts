// The CPU hogs of --load (src/bench/cpu-hogs.ts): they burn CPU while the
// benchmark runs, and none outlives it, even a benchmark that is SIGKILLed.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers';

const ROOT = path.resolve(__dirname, '..', '..');

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

describe('cpu hogs', () => {
  it('burn CPU, and leave when the benchmark is killed', async () => {
    const script = `const { startHogs } = require(${JSON.stringify(path.join(ROOT, 'dist', 'bench', 'cpu-hogs.js'))});` +
      'const h = startHogs(2); console.log(JSON.stringify(h.count)); setInterval(() => {}, 1000);';
    const bench = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    bench.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    expect(await waitFor(() => out.includes('2'), 20_000)).toBe(true);
    const kids = () => readFileSync(`/proc/${bench.pid}/task/${bench.pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number);
    expect(await waitFor(() => kids().length === 2, 5000)).toBe(true);
    const hogs = kids();
    const before = hogs.map((p) => cpuTicks(p)!);
    await new Promise((r) => setTimeout(r, 500));
    // Each burns CPU all along (a full core would be 50 ticks in the 0.5 s; the
    // bound leaves room for a machine busy with other tests).
    hogs.forEach((p, i) => expect(cpuTicks(p)! - before[i]).toBeGreaterThan(5));
    bench.kill('SIGKILL');
    expect(await waitFor(() => hogs.every((p) => cpuTicks(p) === null), 5000)).toBe(true);
  }, 30_000);
});
