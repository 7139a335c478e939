// Out of fds (run under `prlimit --nofile=N:N`, then every fd left is taken):
// every way to start a child fails with SpawnError EMFILE or succeeds,
// nothing it opened is left behind at any failure point, and the exit is
// still seen when only pidfd_open runs out.
import { openSync, closeSync } from 'node:fs';
import { exec, popen, runCheck, spawn } from '../../dist/index.mjs';
import { closing, attempt, fdCount, scenario, settle, sleep, threadCount, startExecutor } from './common.mjs';

const IGNORE = { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' };

function readAll(stream) {
  return new Promise((resolve) => {
    let text = '';
    stream.on('data', (c) => (text += c));
    stream.on('end', () => resolve(text));
    stream.on('error', () => resolve(text));
  });
}

/** Result of one attempt, raced against a hang (a result that never comes). */
async function bounded(promise, ms = 4000) {
  let timer;
  const hang = new Promise((r) => (timer = setTimeout(() => r({ hung: true }), ms)));
  const r = await Promise.race([settle(promise), hang]);
  clearTimeout(timer);
  return r;
}

async function execOutcome(tag) {
  const r = await bounded(exec(['/bin/echo', tag]));
  if (r.hung) return 'hung';
  if (r.error) return r.error.code === 'EMFILE' ? 'EMFILE' : `error ${r.error.code} ${r.error.message}`;
  return r.value.stdout === `${tag}\n` && r.value.exitCode === 0 ? 'ok' : `wrong ${JSON.stringify(r.value)}`;
}

async function spawnOutcome(tag) {
  const s = attempt(() => spawn('/bin/echo', [tag]));
  if (s.error) return s.error.code === 'EMFILE' ? 'EMFILE' : `error ${s.error.code} ${s.error.message}`;
  const child = s.value;
  const r = await bounded(Promise.all([readAll(child.stdout), child.exited]));
  if (r.hung) return 'hung';
  const [text, st] = r.value;
  return text === `${tag}\n` && st.exitCode === 0 ? 'ok' : `wrong ${JSON.stringify({ text, st })}`;
}

await scenario('emfile', 25_000, async (summary) => {
  // Warm up what is created once per process: the shared /dev/null, the
  // signal pipe, stream internals.
  await exec(['/bin/true']);
  await spawn('/bin/echo', ['warm']).exited;
  await popen(['/bin/true'], 'r').close();
  await runCheck(['/bin/true']);
  await sleep(50);
  await startExecutor(exec);
  summary.baseline = { fds: fdCount(), threads: threadCount() };

  const fillers = [];
  for (;;) {
    try {
      fillers.push(openSync('/dev/null', 'r'));
    } catch (err) {
      summary.fillError = err.code;
      break;
    }
  }
  summary.filled = fillers.length;

  // No fd left at all.
  const full = {};
  full.spawn = attempt(() => spawn('/bin/echo', ['x'])).error;
  full.exec = (await bounded(exec(['/bin/echo', 'x']))).error ?? 'resolved';
  full.popen = attempt(() => popen(['/bin/echo', 'x'], 'r')).error;
  const check = await bounded(runCheck(['/bin/echo', 'OK']));
  full.runCheck = check.value ? { state: check.value.state, spawnError: check.value.spawnError, output: check.value.output } : check;
  // No pipe needed: only the exit watch's pidfd_open runs out, and the exit
  // must still be seen.
  const quiet = attempt(() => spawn('sleep', ['0.2'], IGNORE));
  const quietExit = quiet.value ? await bounded(quiet.value.exited) : quiet;
  full.ignoredStdio = quietExit.value
    ? { exitCode: quietExit.value.exitCode, durationMs: Math.round(quietExit.value.durationMs) }
    : quietExit;
  summary.full = full;

  // Free one fd at a time: each attempt fails at a later step (first pipe,
  // second pipe, third pipe, the exit watch) or succeeds; none may leak.
  summary.steps = [];
  for (let free = 1; free <= 8; free++) {
    closeSync(fillers.pop());
    const before = fdCount();
    const execResult = await execOutcome(`exec ${free}`);
    await sleep(20);
    const afterExec = fdCount();
    const spawnResult = await spawnOutcome(`spawn ${free}`);
    await sleep(20);
    summary.steps.push({ free, exec: execResult, spawn: spawnResult, leakedExec: afterExec - before, leaked: fdCount() - before });
  }

  for (const fd of fillers.splice(0)) closeSync(fd);
  await closing(summary, exec);
});
