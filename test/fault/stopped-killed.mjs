// Children killed or stopped from outside, by pid: SIGKILL is reported as
// such, a stop is not an exit, and a SIGSTOP'd plugin is still bounded by
// its timeout (SIGTERM stays pending on a stopped process; forceKillAfter's
// SIGKILL is what ends it).
import { exec, execFile, runCheck, spawn } from '../../dist/index.mjs';
import { closing, PROBE, children, fdCount, scenario, settle, sleep, threadCount, waitFor, startExecutor } from './common.mjs';

const IGNORE = { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' };
const SIGSTOP = 19;

function brief(st) {
  return st && { exitCode: st.exitCode, signal: st.signal, timedOut: st.timedOut, durationMs: Math.round(st.durationMs) };
}

await scenario('stopped-killed', 25_000, async (summary) => {
  await exec(['/bin/true']);
  await sleep(50);
  await startExecutor(exec);
  summary.baseline = { fds: fdCount(), threads: threadCount() };

  // exec's child killed by someone else: ExecError with the signal.
  const running = settle(exec(['sleep', '5']));
  await waitFor(() => children().length === 1, 2000);
  process.kill(children()[0], 'SIGKILL');
  const killed = (await running).error;
  summary.execKilled = killed && { name: killed.name, message: killed.message.split('\n')[0] };
  const killedResult = execFile('sleep', ['5'], { reject: false });
  await waitFor(() => children().length === 1, 2000);
  process.kill(children()[0], 'SIGKILL');
  summary.execKilledResult = brief(await killedResult);

  // spawn with streams: the child dies, the streams end, nothing stays open.
  const cat = spawn('/bin/cat', []);
  const ended = new Promise((r) => cat.stdout.on('end', r).resume());
  process.kill(cat.pid, 'SIGKILL');
  summary.spawnKilled = brief(await cat.exited);
  await ended;

  // Stopped, then continued: not an exit, then a normal one.
  const paused = spawn('sleep', ['0.3'], IGNORE);
  process.kill(paused.pid, 'SIGSTOP');
  await sleep(500);
  summary.stoppedStatusWhileStopped = paused.exitStatus;
  process.kill(paused.pid, 'SIGCONT');
  summary.continued = brief(await paused.exited);

  // Stopped, then killed.
  const frozen = spawn('sleep', ['5'], IGNORE);
  process.kill(frozen.pid, 'SIGSTOP');
  await sleep(50);
  process.kill(frozen.pid, 'SIGKILL');
  summary.stoppedKilled = brief(await frozen.exited);

  // Plugins that stop themselves, with timeouts.
  const t = performance.now();
  const check = await runCheck([PROBE, 'raise', String(SIGSTOP)], { timeout: 300, forceKillAfter: 300 });
  summary.stoppedCheck = { state: check.state, output: check.output, signal: check.signal, timedOut: check.timedOut, wallMs: Math.round(performance.now() - t) };
  summary.stoppedExec = brief(await execFile(PROBE, ['raise', String(SIGSTOP)], { timeout: 200, forceKillAfter: 200, reject: false }));
  const stoppedSpawn = spawn(PROBE, ['raise', String(SIGSTOP)], { ...IGNORE, timeout: 200, forceKillAfter: 200 });
  summary.stoppedSpawn = brief(await stoppedSpawn.exited);

  await closing(summary, exec);
});
