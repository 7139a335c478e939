import { Worker } from 'node:worker_threads';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { childProcesses, isAlive, waitFor } from '../helpers';

// A worker that spawns and then goes away while its child still runs: the
// host process must neither crash nor keep a zombie.
const entry = path.resolve(__dirname, '..', '..', 'dist', 'index.js');
const code = (end: string) => `
const { parentPort } = require('node:worker_threads');
const { spawn, exec } = require(${JSON.stringify(entry)});
(async () => {
  const r = await exec(['/bin/echo', 'from worker']);
  const child = spawn('sleep', ['0.3'], { stdout: 'ignore', stderr: 'ignore', stdin: 'ignore' });
  parentPort.postMessage({ out: r.stdout, pid: child.pid });
  ${end}
})();`;

function runWorker(end: string): Promise<{ out: string; pid: number; exitCode: number }> {
  return new Promise((resolve, reject) => {
    const w = new Worker(code(end), { eval: true });
    let msg: { out: string; pid: number } | undefined;
    w.on('message', (m) => {
      msg = m;
      if (end === '') void w.terminate();
    });
    w.on('error', reject);
    w.on('exit', (exitCode) => (msg ? resolve({ ...msg, exitCode }) : reject(new Error('no message'))));
  });
}

describe('worker threads', () => {
  it('spawns from a worker and survives its termination with a child running', async () => {
    const r = await runWorker('');
    expect(r.out).toBe('from worker\n');
    // Reaped in the background once it exits; never left a zombie.
    expect(await waitFor(() => !isAlive(r.pid) && !childProcesses().some((c) => c.pid === r.pid), 3000)).toBe(true);
  });

  it('survives a worker that exits on its own with an unref()ed child', async () => {
    const r = await runWorker('child.unref();');
    expect(r.exitCode).toBe(0);
    expect(await waitFor(() => !childProcesses().some((c) => c.pid === r.pid), 3000)).toBe(true);
  });
});
