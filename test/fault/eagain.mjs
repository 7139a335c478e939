// Out of processes (run as an unprivileged user under `prlimit --nproc=N:N`;
// root ignores RLIMIT_NPROC): children are started until the kernel says
// EAGAIN; every API then reports it as a typed error, nothing leaks, and once
// the children are gone spawning works again.
import { exec, popen, runCheck, spawn } from '../../dist/index.mjs';
import { closing, attempt, fdCount, scenario, settle, sleep, threadCount, startExecutor } from './common.mjs';

const IGNORE = { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' };

await scenario('eagain', 25_000, async (summary) => {
  summary.uid = process.getuid();
  await exec(['/bin/true']);
  await popen(['/bin/true'], 'r').close();
  await runCheck(['/bin/true']);
  await sleep(50);
  await startExecutor(exec);
  summary.baseline = { fds: fdCount(), threads: threadCount() };

  const held = [];
  let first;
  while (held.length < 1000) {
    const r = attempt(() => spawn('sleep', ['30'], IGNORE));
    if (r.error) {
      first = r.error;
      break;
    }
    held.push(r.value);
  }
  summary.held = held.length;
  summary.firstError = first ?? null;

  // At the limit: every way in says EAGAIN, and leaves nothing behind.
  const fdsAtLimit = fdCount();
  const atLimit = {};
  atLimit.spawnPipes = attempt(() => spawn('/bin/echo', ['x'])).error ?? 'started';
  atLimit.vfork = attempt(() => spawn('/bin/true', [], { ...IGNORE, method: 'vfork' })).error ?? 'started';
  atLimit.exec = (await settle(exec(['/bin/echo', 'x']))).error ?? 'resolved';
  atLimit.popen = attempt(() => popen(['/bin/echo', 'x'], 'r')).error ?? 'started';
  const check = await runCheck(['/bin/echo', 'OK']);
  atLimit.runCheck = { state: check.state, spawnError: check.spawnError, output: check.output };
  await sleep(20);
  atLimit.fdsLeaked = fdCount() - fdsAtLimit;
  summary.atLimit = atLimit;

  // Free the slots by pid; every child is reported as killed.
  for (const c of held) c.kill('SIGKILL');
  const statuses = await Promise.all(held.map((c) => c.exited));
  summary.killedBySigkill = statuses.filter((s) => s.signal === 'SIGKILL').length;
  await closing(summary, exec);
});
