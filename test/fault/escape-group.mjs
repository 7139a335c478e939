// A child that moves itself out of the process group it was started in
// (fixtures/leave-group.c joins its parent's group): a timeout must still
// bound the run, so the child's own pid has to be signalled, not only the
// group it no longer belongs to (issue 8, defect c).
import { exec, execFile, runCheck, spawn } from '../../dist/index.mjs';
import { FIXTURES, children, closing, fdCount, isAlive, scenario, sleep, threadCount, startExecutor } from './common.mjs';

const LEAVE = `${FIXTURES}leave-group`;

function brief(r) {
  return { exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, durationMs: Math.round(r.durationMs), stdout: r.stdout };
}

function killLeftovers() {
  // Under the defect the child runs its 4 s out; it is still our child.
  for (const pid of children()) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
}

await scenario('escape-group', 40_000, async (summary) => {
  await exec(['/bin/true']);
  await sleep(50);
  await startExecutor(exec);
  summary.baseline = { fds: fdCount(), threads: threadCount() };

  summary.exec = brief(await execFile(LEAVE, ['4'], { timeout: 300, forceKillAfter: 300, reject: false }));
  killLeftovers();
  const check = await runCheck([LEAVE, '4'], { timeout: 300, forceKillAfter: 300 });
  summary.runCheck = { state: check.state, output: check.output, timedOut: check.timedOut, durationMs: Math.round(check.durationMs) };
  killLeftovers();
  const child = spawn(LEAVE, ['4'], { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore', timeout: 300, forceKillAfter: 300 });
  summary.spawn = brief(await child.exited);
  killLeftovers();

  await closing(summary, exec);
});
