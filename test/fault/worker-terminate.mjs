// worker.terminate() mid-flight: a worker with exec, spawn (streams), popen,
// runCheck with a timer running and a child ignoring SIGTERM all in flight
// is terminated, several times at different moments. This process lives on,
// every child is reaped, and fds and threads come back to where they were.
import { Worker } from 'node:worker_threads';
import { exec } from '../../dist/index.mjs';
import { closing, children, fdCount, isAlive, scenario, sleep, threadCount, waitFor, startExecutor } from './common.mjs';

const entry = new URL('../../dist/index.js', import.meta.url).pathname;
const workerCode = `
const { parentPort, workerData } = require('node:worker_threads');
const { exec, execFile, popen, runCheck, spawn } = require(${JSON.stringify(entry)});
const pids = [];
const cat = spawn('/bin/cat', []);
cat.stdout.on('data', () => {});
cat.stdin.write('held open\\n');
pids.push(cat.pid);
const stubborn = spawn('/bin/sh', ['-c', 'trap "" TERM; sleep 0.6'], { timeout: 50, forceKillAfter: 5000 });
pids.push(stubborn.pid);
const r = popen(['/bin/sh', '-c', 'echo a; sleep 0.5'], 'r');
r.on('data', () => {});
pids.push(r.pid);
void exec(['sleep', '0.5'], { timeout: 5000 }).catch(() => {});
void execFile('head', ['-c', '2000000', '/dev/zero'], { maxBuffer: 1 << 22 }).catch(() => {});
void runCheck(['sleep', '0.5'], { timeout: 200 });
for (let i = 0; i < 20; i++) void exec(['/bin/echo', String(i)]).catch(() => {});
setTimeout(() => parentPort.postMessage({ pids }), workerData.delay);
setInterval(() => {}, 1000);`;

await scenario('worker-terminate', 25_000, async (summary) => {
  await exec(['/bin/true']);
  await sleep(50);
  await startExecutor(exec);
  summary.baseline = { fds: fdCount(), threads: threadCount() };
  summary.rounds = [];
  for (const delay of [0, 5, 30, 120]) {
    const worker = new Worker(workerCode, { eval: true, workerData: { delay } });
    const msg = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    const exitCode = await worker.terminate();
    const gone = await waitFor(() => msg.pids.every((p) => !isAlive(p)) && children().length === 0, 5000);
    summary.rounds.push({ delay, exitCode, spawned: msg.pids.length, childrenGone: gone, left: children() });
  }
  // Background reapers end with their children; fds of the workers' loops close.
  summary.threadsBack = await waitFor(() => threadCount() <= summary.baseline.threads, 5000);
  summary.fdsBack = await waitFor(() => fdCount() <= summary.baseline.fds, 3000);
  await closing(summary, exec);
});
