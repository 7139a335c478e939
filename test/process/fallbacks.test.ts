// The paths old kernels take (no pidfd_open before 5.3, no close_range before
// 5.9) and a capture that cannot start, forced by the switches the addon
// reads at load. Each case runs in its own Node process.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const script = path.resolve(__dirname, '..', 'fallback', 'exercise.js');
const hasStrace = spawnSync('strace', ['-V']).status === 0;
if (!hasStrace) console.warn('skipped: syscall checks of the fallbacks need strace (apt-get install strace)');

function run(env: Record<string, string>): Record<string, any> {
  return JSON.parse(execFileSync(process.execPath, [script], { env: { ...process.env, ...env }, encoding: 'utf8' }));
}

/** Syscall names the process tree made (strace -f -c summary). */
function syscallsOf(env: Record<string, string>): Set<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-strace-'));
  const summary = path.join(dir, 'summary');
  try {
    const r = spawnSync('strace', ['-f', '-qq', '-c', '-o', summary, process.execPath, script], {
      env: { ...process.env, ...env }, encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    return syscallNames(readFileSync(summary, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function syscallNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const m = /\s(\w+)\s*$/.exec(line);
    if (m && /^\s*[\d.]+\s/.test(line)) names.add(m[1]);
  }
  return names;
}

/** What a child did before it ran /bin/true. */
interface ChildSignals {
  /** Signals it set to SIG_DFL (the new action: a default in the old one does not count). */
  reset: number[];
  readStatus: boolean;
  /** It unblocked every signal (SIG_SETMASK to none)… */
  unblocked: boolean;
  /** …and reset one after that, when a handler could already have run. */
  resetAfterUnblock: boolean;
}

/** For each process that ran /bin/true, what it did before the execve (strace -X raw). */
function childSignalResets(text: string): ChildSignals[] {
  const fresh = (): ChildSignals => ({ reset: [], readStatus: false, unblocked: false, resetAfterUnblock: false });
  const byPid = new Map<string, ChildSignals>();
  const out: ChildSignals[] = [];
  for (const line of text.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp < 0) continue;
    // strace pads the pid to five columns: "812   execve(...".
    const pid = line.slice(0, sp);
    const call = line.slice(sp + 1).trimStart();
    let c = byPid.get(pid);
    if (c === undefined) byPid.set(pid, (c = fresh()));
    // The new action is the second argument (strace prints it on entry; a
    // line split by another process's event ends before the old one).
    if (call.startsWith('rt_sigaction(') && call.slice(call.indexOf(', ') + 2).startsWith('{sa_handler=0,')) {
      c.reset.push(Number(call.slice(13, call.indexOf(','))));
      if (c.unblocked) c.resetAfterUnblock = true;
    } else if (call.startsWith('rt_sigprocmask(0x2, [],')) c.unblocked = true;
    else if (call.startsWith('openat(') && call.includes('"/proc/self/status"')) c.readStatus = true;
    else if (call.startsWith('execve("/bin/true"')) {
      out.push(c);
      byPid.set(pid, fresh());
    }
  }
  return out;
}

describe('forced fallbacks', () => {
  it('default: pidfds and close_range, children see only fds 0-2', () => {
    const out = run({});
    expect(out).toMatchObject({ fds_posix_spawn: '0,1,2', fds_vfork: '0,1,2', fds_fork: '0,1,2', echo: 'captured\n' });
    expect(out).toMatchObject({ cwd_auto: '/usr\n', cwd_posix_spawn: '/usr\n' });
    expect(out.pidfdsWhileRunning).toBeGreaterThanOrEqual(1);
    expect(out).toMatchObject({ childrenLeft: 0, fdsLeaked: 0 });
  });

  it('NOSHELL_NO_PIDFD: exits found by polling the status, same results', () => {
    const out = run({ NOSHELL_NO_PIDFD: '1' });
    expect(out.pidfdsWhileRunning).toBe(0);
    expect(out.sleep.exitCode).toBe(0);
    expect(out.sleep.durationMs).toBeGreaterThanOrEqual(290);
    expect(out.sleep.durationMs).toBeLessThan(1500);
    expect(out.timeout).toEqual({ timedOut: true, signal: 'SIGTERM', stdout: 'started\n' });
    expect(out.check).toEqual({ state: 1, output: 'WARNING: warn' });
    expect(out).toMatchObject({ echo: 'captured\n', childrenLeft: 0, fdsLeaked: 0 });
  });

  it('NOSHELL_NO_CLOSE_RANGE: the clone and fork paths close inherited fds by listing /proc/self/fd', () => {
    const out = run({ NOSHELL_NO_CLOSE_RANGE: '1' });
    expect(out).toMatchObject({ fds_posix_spawn: '0,1,2', fds_vfork: '0,1,2', fds_fork: '0,1,2' });
    expect(out).toMatchObject({ echo: 'captured\n', childrenLeft: 0, fdsLeaked: 0 });
  });

  it.runIf(hasStrace)('the switches really take the fallbacks (strace)', () => {
    const normal = syscallsOf({});
    expect(normal.has('pidfd_open')).toBe(true);
    expect(normal.has('close_range')).toBe(true);
    const forced = syscallsOf({ NOSHELL_NO_PIDFD: '1', NOSHELL_NO_CLOSE_RANGE: '1' });
    expect(forced.has('pidfd_open')).toBe(false);
    // posix_spawn (glibc) still uses close_range itself; the listing is ours.
    expect(forced.has('getdents64')).toBe(true);
  });

  // The clone/fork child resets what its own /proc/self/status says is not
  // SIG_DFL (SigIgn, SigCgt: its table is the parent's as of the clone), not
  // all 62 signals one call each; without /proc, every one.
  it.runIf(hasStrace).each([
    ['reads /proc/self/status and resets exactly the handled and ignored signals', {}],
    ['NOSHELL_NO_PROC_SIGNALS: resets all 62 without reading /proc', { NOSHELL_NO_PROC_SIGNALS: '1' }],
  ] as const)('the child %s (strace)', (_name, env) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-strace-'));
    const trace = path.join(dir, 'trace');
    try {
      const r = spawnSync('strace', ['-f', '-qq', '-X', 'raw', '-e', 'trace=rt_sigaction,rt_sigprocmask,openat,execve', '-o', trace,
        process.execPath, path.resolve(__dirname, '..', 'fallback', 'signals.js')], { env: { ...process.env, ...env }, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      const expected: number[][] = JSON.parse(r.stdout);
      const children = childSignalResets(readFileSync(trace, 'utf8'));
      // auto, vfork and fork: three children, each with the set read just before it.
      expect(children).toHaveLength(3);
      const all = Array.from({ length: 64 }, (_, i) => i + 1).filter((s) => s !== 9 && s !== 19);
      children.forEach((c, i) => {
        // Every reset before the child unblocks signals, none after.
        expect(c.unblocked).toBe(true);
        expect(c.resetAfterUnblock).toBe(false);
        if (env.NOSHELL_NO_PROC_SIGNALS) {
          expect(c.readStatus).toBe(false);
          expect(c.reset).toEqual(all);
        } else {
          expect(c.readStatus).toBe(true);
          expect(c.reset).toEqual(expected[i]);
          // Node ignores SIGPIPE, the script handles SIGUSR2 and SIGWINCH.
          expect(c.reset).toEqual(expect.arrayContaining([12, 13, 28]));
        }
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('NOSHELL_NO_SPAWN_NP (glibc < 2.34): auto clones, posix_spawn closes inherited fds one by one', () => {
    const out = run({ NOSHELL_NO_SPAWN_NP: '1' });
    expect(out).toMatchObject({ fds_posix_spawn: '0,1,2', fds_vfork: '0,1,2', fds_fork: '0,1,2' });
    expect(out.cwd_auto).toBe('/usr\n');
    // Asked for by name, posix_spawn cannot change directory without addchdir_np.
    expect(out.cwd_posix_spawn).toEqual({ name: 'SpawnError', code: 'ENOTSUP', step: 'chdir' });
    expect(out).toMatchObject({ echo: 'captured\n', childrenLeft: 0, fdsLeaked: 0 });
  });

  it('a capture that fails to start is a SpawnError, not an exec that never settles', () => {
    // Before: on_end never ran, exec hung forever and the zombie was never reaped.
    const out = run({ NOSHELL_FAULT_CAPTURE: '1' });
    expect(out.echoError).toEqual({ name: 'SpawnError', code: 'EMFILE', step: 'capture', syscall: 'spawn /bin/echo' });
    expect(out.timeoutError).toEqual({ name: 'SpawnError', code: 'EMFILE', step: 'capture' });
    expect(out.fds_vfork).toBeUndefined();
    expect(out.check.state).toBe(3);
    expect(out.check.output).toMatch(/EMFILE/);
    expect(out).toMatchObject({ childrenLeft: 0, fdsLeaked: 0 });
  });
});
