// execFileSync and execSync: the same options, results and errors as
// execFile and exec, on the calling thread; the event loop waits meanwhile.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ExecError, execFile, execFileSync, execSync, ShellSyntaxError, SpawnError, type ExitMessage, type StartMessage,
} from '../../src/index';
import { childProcesses, openFds, PROBE } from '../helpers';

let leftover: number[] = [];
afterEach(() => {
  for (const pid of leftover) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  leftover = [];
});

/** The fields that must match between the sync and the async call: all but the process's own
 * figures, and `all` as its lines in any order (which of two pipes is read first is a race). */
function same(r: Record<string, unknown>): Record<string, unknown> {
  const { pid: _p, durationMs: _d, rusage: _r, all, ...rest } = r;
  return typeof all === 'string' ? { ...rest, allLines: all.split('\n').sort() } : { ...rest, all };
}

describe('execFileSync and execSync', () => {
  it('give what execFile and exec give: output, status, command, as strings or Buffers, with all', async () => {
    for (const [args, options] of [
      [['both'], {}], [['argv', 'é', 'two words'], { encoding: 'buffer' as const }], [['exit', '3'], { reject: false }],
      [['both'], { all: true }], [['cat'], { input: 'line1\nline2' }],
    ] as const) {
      const sync = execFileSync(PROBE, args, options);
      const async = await execFile(PROBE, args, options);
      expect(same(sync as never)).toEqual(same(async as never));
      expect(sync.pid).toBeGreaterThan(0);
      expect(sync.durationMs).toBeGreaterThan(0);
    }
    expect(execSync('/bin/echo "a b"  c').stdout).toBe('a b c\n');
    expect(execSync(['/bin/echo', 'x']).stdout).toBe('x\n');
    expect(execSync('echo $HOME', { shell: 'auto' }).stdout).toBe(`${process.env.HOME}\n`);
  });

  it('throw what the async calls reject with: TypeError, ShellSyntaxError, SpawnError, ExecError', () => {
    expect(() => execFileSync('no-such-program-anywhere')).toThrow(SpawnError);
    try {
      execFileSync('no-such-program-anywhere');
    } catch (e) {
      expect(e).toMatchObject({ code: 'ENOENT', step: 'resolve' });
    }
    expect(() => execSync('a | b')).toThrow(ShellSyntaxError);
    expect(() => execFileSync(PROBE, ['exit', '3'])).toThrow(ExecError);
    try {
      execFileSync(PROBE, ['exit', '3']);
    } catch (e) {
      expect(e).toMatchObject({ exitCode: 3, message: expect.stringMatching(/^Command failed with exit code 3/) });
    }
    expect(() => execFileSync(PROBE, [], { bogus: 1 } as never)).toThrow(/unknown option "bogus"/);
    expect(() => execFileSync(PROBE, [], { signal: AbortSignal.timeout(10) } as never)).toThrow(/signal does not apply/);
    expect(() => execFileSync(PROBE, [], { ref: false } as never)).toThrow(/ref does not apply/);
    expect(() => execFileSync(PROBE, [], { shell: true } as never)).toThrow(/shell: true makes no sense/);
  });

  it('a timeout kills the group, maxBuffer kills the child, the output grace lets a grandchild\'s pipe go', () => {
    let t = performance.now();
    expect(() => execSync(['sh', '-c', 'sleep 30 & sleep 30'], { timeout: 200 })).toThrow(/timed out after 200 ms/);
    expect(performance.now() - t).toBeLessThan(2000);
    expect(() => execFileSync(PROBE, ['spew', String(10 << 20)], { maxBuffer: 1 << 20 })).toThrow(/larger than maxBuffer/);
    t = performance.now();
    const r = execSync(['sh', '-c', 'sleep 30 & echo $! >&2; echo hi']);
    leftover.push(Number(r.stderr.trim()));
    expect(r).toMatchObject({ stdout: 'hi\n', exitCode: 0, outputCut: true });
    expect(performance.now() - t).toBeLessThan(500);
  });

  it('take the child settings: limits, nice, a new session', () => {
    const r = execFileSync('/bin/sh', ['-c', 'ulimit -n; nice; cat /proc/$$/stat'], { rlimits: { nofile: 77 }, nice: 3, detached: true });
    const [nofile, nice, stat] = r.stdout.trim().split('\n');
    expect([nofile, nice]).toEqual(['77', '3']);
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    expect(fields[2]).toBe(fields[3]);
  });

  it('block the event loop until the child is done, by design', async () => {
    let fired = false;
    const timer = setTimeout(() => {
      fired = true;
    }, 0);
    const t = performance.now();
    execFileSync('/bin/sleep', ['0.2']);
    expect(performance.now() - t).toBeGreaterThan(180);
    expect(fired).toBe(false);
    await new Promise((r) => setTimeout(r, 5));
    expect(fired).toBe(true);
    clearTimeout(timer);
  });

  it('say so on node:diagnostics_channel, path "sync"', () => {
    const starts: StartMessage[] = [];
    const exits: ExitMessage[] = [];
    const onStart = (m: unknown): void => void starts.push(m as StartMessage);
    const onExit = (m: unknown): void => void exits.push(m as ExitMessage);
    subscribe('noshell:start', onStart);
    subscribe('noshell:exit', onExit);
    try {
      execFileSync('/bin/true');
      expect(() => execFileSync('no-such-program-anywhere')).toThrow(SpawnError);
    } finally {
      unsubscribe('noshell:start', onStart);
      unsubscribe('noshell:exit', onExit);
    }
    expect(starts.map((m) => m.path)).toEqual(['sync', 'sync']);
    expect(exits[0]).toMatchObject({ path: 'sync', status: { exitCode: 0 }, error: null });
    expect(exits[1]).toMatchObject({ path: 'sync', status: null, error: { code: 'ENOENT' } });
  });

  it('300 calls, with failures among them, leave no fd and no child behind', () => {
    execFileSync('/bin/true');
    const fds = openFds().length;
    for (let i = 0; i < 100; i++) {
      execFileSync('/bin/true');
      execFileSync(PROBE, ['both'], { all: true });
      expect(() => execFileSync('no-such-program-anywhere')).toThrow(SpawnError);
    }
    expect(openFds().length).toBe(fds);
    expect(childProcesses()).toEqual([]);
  });
});
