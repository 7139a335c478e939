// worker.terminate() while the worker's children still run and the user is
// out of processes (run as an unprivileged user under `prlimit --nproc=N:N`):
// the worker fills the limit, then goes away. Its children must still be
// reaped (or killed) with no thread to spare, and this process must live on.
import { Worker } from 'node:worker_threads';
import { exec } from '../../dist/index.mjs';
import { closing, children, fdCount, isAlive, scenario, sleep, threadCount, waitFor, startExecutor } from './common.mjs';

const entry = new URL('../../dist/index.js', import.meta.url).pathname;
const workerCode = `
const { parentPort } = require('node:worker_threads');
const { spawn } = require(${JSON.stringify(entry)});
const pids = [];
let error = null;
for (let i = 0; i < 1000; i++) {
  try {
    pids.push(spawn('sleep', ['2'], { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' }).pid);
  } catch (err) {
    error = { code: err.code, step: err.step };
    break;
  }
}
parentPort.postMessage({ pids, error });
setInterval(() => {}, 1000);`;

await scenario('worker-eagain', 25_000, async (summary) => {
  summary.uid = process.getuid();
  await exec(['/bin/true']);
  await sleep(50);
  await startExecutor(exec);
  summary.baseline = { fds: fdCount(), threads: threadCount() };

  const worker = new Worker(workerCode, { eval: true });
  const msg = await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  summary.spawned = msg.pids.length;
  summary.workerError = msg.error;
  // Terminated with every child still running and no process slot free.
  summary.exitCode = await worker.terminate();

  // Reaped in the background (or killed): neither running nor a zombie.
  summary.childrenGone = await waitFor(() => msg.pids.every((p) => !isAlive(p)) && children().length === 0, 8000);
  summary.leftChildren = children();
  summary.threadsBack = await waitFor(() => threadCount() <= summary.baseline.threads, 5000);
  await closing(summary, exec);
  // Whatever a failed run left behind must not outlive the scenario.
  for (const p of msg.pids) if (isAlive(p)) process.kill(p, 'SIGKILL');
});
