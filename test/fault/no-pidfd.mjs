// Exit watching without pidfds. Run under fixtures/no-pidfd (a seccomp
// filter makes pidfd_open fail with ENOSYS, as on kernels < 5.3), the exit
// watch must fall back to polling and everything must still work; run
// without it, the same scenario shows the pidfd it normally uses (so the
// check that none was opened can fail).
import { readFileSync } from 'node:fs';
import { exec, runCheck, spawn } from '../../dist/index.mjs';
import { closing, fdCount, pidfdCount, scenario, sleep, threadCount, waitFor, startExecutor } from './common.mjs';

const IGNORE = { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' };

function brief(st) {
  return { exitCode: st.exitCode, signal: st.signal, timedOut: st.timedOut, durationMs: Math.round(st.durationMs) };
}

await scenario('no-pidfd', 25_000, async (summary) => {
  summary.seccomp = Number(/^Seccomp:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
  await exec(['/bin/true']);
  await sleep(50);
  await startExecutor(exec);
  summary.baseline = { fds: fdCount(), threads: threadCount() };

  // A running child with no output to wait for: its exit is watched at once.
  const child = spawn('sleep', ['0.3'], IGNORE);
  await sleep(100);
  summary.pidfdsWhileRunning = pidfdCount();
  summary.sleep = brief(await child.exited);

  summary.timeout = brief(await spawn('sleep', ['5'], { ...IGNORE, timeout: 200 }).exited);
  const victim = spawn('sleep', ['5'], IGNORE);
  await sleep(20);
  victim.kill();
  summary.killed = brief(await victim.exited);

  // The output ends first, the child lives on: the watch starts then.
  const r = await exec(['/bin/sh', '-c', 'echo early; exec >&- 2>&-; sleep 0.3']);
  summary.outputFirst = { ...brief(r), stdout: r.stdout };
  const check = await runCheck(['/bin/sh', '-c', 'echo "OK - fine | t=1"; exec >&-; sleep 0.1']);
  summary.check = { state: check.state, output: check.output };

  // Many at once through the fallback.
  const many = await Promise.all(Array.from({ length: 100 }, () => spawn('sleep', ['0.05'], IGNORE).exited));
  summary.manyExitedZero = many.filter((s) => s.exitCode === 0).length;

  await waitFor(() => fdCount() <= summary.baseline.fds, 2000);
  await closing(summary, exec);
});
