// A native output capture that cannot start (run with NOSHELL_FAULT_CAPTURE=1,
// read once when the addon loads: every capture fails as if uv_read_start had
// returned EMFILE). exec and runCheck used to wait forever for output that
// nobody read (issue 8, defect b); now the child is killed and reaped and the
// caller gets SpawnError at step 'capture'. spawn() reads through Node
// streams, not a native capture, and keeps working.
import { once } from 'node:events';
import { exec, execFile, runCheck, spawn } from '../../dist/index.mjs';
import { children, closing, errorFields, fdCount, scenario, sleep, threadCount, startExecutor } from './common.mjs';

/** exec's answer, or 'hung' when none comes. */
async function bounded(promise, ms = 4000) {
  let timer;
  const hang = new Promise((r) => (timer = setTimeout(() => r('hung'), ms)));
  const r = await Promise.race([promise.then(() => 'resolved', errorFields), hang]);
  clearTimeout(timer);
  return r;
}

async function viaSpawn(argv) {
  // stdin from the shared /dev/null, as exec's: opened once, then kept.
  const child = spawn(argv[0], argv.slice(1), { stdin: 'ignore' });
  let stdout = '';
  child.stdout.on('data', (c) => (stdout += c));
  await Promise.all([child.exited, once(child.stdout, 'end')]);
  return { stdout };
}

await scenario('capture-fault', 25_000, async (summary) => {
  summary.flag = process.env.NOSHELL_FAULT_CAPTURE ?? null;
  await viaSpawn(['/bin/true']);
  await sleep(50);
  await startExecutor(exec);
  summary.baseline = { fds: fdCount(), threads: threadCount() };

  summary.exec = await bounded(exec(['/bin/echo', 'x']));
  // A child that would run for 5 s: killed and reaped at once, not left behind.
  const t = performance.now();
  summary.long = await bounded(execFile('sleep', ['5'], { timeout: 10_000 }));
  summary.longMs = Math.round(performance.now() - t);
  summary.childrenRightAfter = children();
  const check = await runCheck(['/bin/echo', 'OK']);
  summary.runCheck = { state: check.state, spawnError: check.spawnError, output: check.output };
  const many = await Promise.all(Array.from({ length: 50 }, (_, i) => bounded(exec(['/bin/echo', String(i)]))));
  summary.manyCaptureErrors = many.filter((e) => e?.code === 'EMFILE' && e?.step === 'capture').length;
  summary.manyHung = many.filter((e) => e === 'hung').length;

  await closing(summary, viaSpawn);
});
