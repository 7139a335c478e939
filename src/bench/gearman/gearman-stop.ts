// Stops a process this benchmark started, by its pid: SIGTERM, then SIGKILL
// after `graceMs`. A session leader's group goes too, so no plugin survives it.
import type { ChildProcess } from 'node:child_process';

function exited(p: ChildProcess): boolean {
  return p.exitCode !== null || p.signalCode !== null;
}

export async function stopProcess(p: ChildProcess, graceMs: number, group = false): Promise<void> {
  if (p.pid === undefined) return;
  const pid = p.pid;
  const kill = (sig: NodeJS.Signals) => {
    try {
      process.kill(group ? -pid : pid, sig);
    } catch {
      // already gone
    }
  };
  if (!exited(p)) {
    const gone = new Promise<void>((resolve) => p.once('exit', () => resolve()));
    kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([gone.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs)))]);
    clearTimeout(timer);
    if (late) {
      kill('SIGKILL');
      await gone;
    }
  }
  // Members of the group that outlived their leader (its group id is its pid).
  if (group) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // none left
    }
  }
}
