// worker.terminate() landing while the worker is inside the native spawn
// call (or loading the addon): V8 is terminating, every N-API call fails, and
// an exception the addon then throws cannot be thrown. node-addon-api used to
// treat that as fatal and abort the whole process (SIGABRT).
import { Worker } from 'node:worker_threads';
import { exec } from '../../dist/index.mjs';
import { children, scenario, settle, sleep, threadCount, waitFor, startExecutor } from './common.mjs';

const entry = new URL('../../dist/index.js', import.meta.url).pathname;
const workerCode = `
const { spawn, execFile } = require(${JSON.stringify(entry)});
function loop() {
  for (let i = 0; i < 20; i++) {
    try {
      const c = spawn('/bin/sleep', ['0.0' + (i % 5)], { stdout: 'pipe', timeout: 3, forceKillAfter: 1 });
      c.stdout.resume();
      if (i % 3 === 0) c.kill();
    } catch {}
    execFile('/bin/echo', ['x']).catch(() => {});
  }
  setTimeout(loop, 5);
}
loop();`;

await scenario('worker-terminate-spawning', 40_000, async (summary) => {
  await exec(['/bin/true']);
  await startExecutor(exec);
  summary.baseline = { threads: threadCount() };
  const end = Date.now() + Number(process.env.SCENARIO_MS ?? 4000);
  let rounds = 0;
  while (Date.now() < end) {
    const workers = Array.from({ length: 4 }, () => new Worker(workerCode, { eval: true }));
    await sleep(50 + Math.random() * 200);
    await Promise.all(workers.map((w) => w.terminate()));
    rounds++;
  }
  summary.rounds = rounds;
  // The terminated workers' children are reaped in the background.
  summary.childrenGone = await waitFor(() => children().length === 0, 5000);
  summary.threadsBack = await waitFor(() => threadCount() <= summary.baseline.threads, 5000);
  const later = await settle(exec(['/bin/echo', 'after']));
  summary.laterExec = later.value?.stdout ?? later.error;
});
