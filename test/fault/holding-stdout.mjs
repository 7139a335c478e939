// A child that exits while a background grandchild still holds its stdout.
// Without a timeout exec waits for the output to end (like child_process);
// with one, the grandchild dies with the group; one that left the group
// (setsid) is given up on after forceKillAfter, so the timeout still bounds
// the run. spawn() reports the exit at once and its stream ends with the
// grandchild.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exec, runCheck, spawn } from '../../dist/index.mjs';
import { closing, fdCount, isAlive, scenario, sleep, threadCount, waitFor, startExecutor } from './common.mjs';

const dir = mkdtempSync(path.join(tmpdir(), 'noshell-hold-'));
const pidFile = (name) => path.join(dir, name);
const readPid = (name) => Number(readFileSync(pidFile(name), 'utf8').trim());
const escaped = [];

function brief(r) {
  return { exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, stdout: r.stdout, durationMs: Math.round(r.durationMs) };
}

await scenario('holding-stdout', 25_000, async (summary) => {
  await exec(['/bin/true']);
  await sleep(50);
  await startExecutor(exec);
  summary.baseline = { fds: fdCount(), threads: threadCount() };

  // The default output grace: the child's exit and what was read in 100 ms
  // after it; the grandchild is left running (it ends itself here).
  const graced = await exec(['/bin/sh', '-c', 'sleep 0.4 & echo hi'], { reject: false });
  summary.graced = { ...brief(graced), outputCut: graced.outputCut };

  // Without a grace the result waits for the grandchild to close the output.
  summary.waits = brief(await exec(['/bin/sh', '-c', 'sleep 0.4 & echo hi'], { reject: false, outputGrace: Infinity }));

  // A timeout: the group, grandchild included, is killed.
  const grouped = await exec(['/bin/sh', '-c', `sleep 5 & echo $! > ${pidFile('g')}; echo hi`], {
    timeout: 300, reject: false, outputGrace: Infinity,
  });
  summary.grouped = { ...brief(grouped), grandchildAlive: await waitFor(() => !isAlive(readPid('g')), 1000) ? false : true };

  // The grandchild escaped the group (setsid) and holds stdout: given up on
  // after forceKillAfter; it is not ours to kill, so the scenario does.
  const setsid = await exec(['/bin/sh', '-c', `setsid sleep 5 & echo $! > ${pidFile('s')}; echo hi`], {
    timeout: 300, forceKillAfter: 300, reject: false, outputGrace: Infinity,
  });
  escaped.push(readPid('s'));
  summary.setsid = brief(setsid);
  const check = await runCheck(['/bin/sh', '-c', `setsid sleep 5 & echo $! > ${pidFile('c')}; echo OK - held`], {
    timeout: 300, forceKillAfter: 300, outputGrace: Infinity,
  });
  escaped.push(readPid('c'));
  summary.setsidCheck = { state: check.state, output: check.output, timedOut: check.timedOut, durationMs: Math.round(check.durationMs) };

  // spawn(): the exit is reported at once; stdout ends when the grandchild,
  // killed here by pid, lets go of it.
  const child = spawn('/bin/sh', ['-c', 'sleep 5 & echo $!']);
  let text = '';
  child.stdout.on('data', (c) => (text += c));
  const ended = new Promise((r) => child.stdout.on('end', r));
  const st = await child.exited;
  await waitFor(() => text.includes('\n'), 2000);
  const grandchild = Number(text.trim());
  const stillOpen = !child.stdout.readableEnded;
  process.kill(grandchild, 'SIGKILL');
  await ended;
  summary.spawn = { exitCode: st.exitCode, durationMs: Math.round(st.durationMs), streamOpenAfterExit: stillOpen };

  for (const pid of escaped) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  await closing(summary, exec);
});
