import { execFile as cpExecFile } from 'node:child_process';
import { chmodSync, mkdtempSync, openSync, closeSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn, SpawnError } from '../../src/index';
import { isAlive, METHODS, nulFields, parseInfo, PROBE, readPid, waitFor } from '../helpers';

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-spawn-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const tricky = ['', ' ', 'a b', "it's", '"q"', '$HOME', '$(id)', '`id`', ';', '&&', '|', '*', '?', '~', '#x',
  '日本語 ü', 'back\\slash', '\n', '\t', '--x=1', "'", '>out', 'a'.repeat(10000)];

describe.each(METHODS)('method %s', (method) => {
  it('passes argv byte-exact, with no shell in between', async () => {
    const r = await execFile(PROBE, ['argv', ...tricky], { method });
    expect(nulFields(r.stdout as string)).toEqual([PROBE, 'argv', ...tricky]);
    const info = parseInfo((await execFile(PROBE, ['info'], { method })).stdout as string);
    // The Node process itself is the parent: no /bin/sh, no helper process.
    expect(Number(info.ppid)).toBe(process.pid);
  });

  it('sets argv0 apart from the program path', async () => {
    const r = await execFile(PROBE, ['argv'], { method, argv0: 'custom-name' });
    expect(nulFields(r.stdout as string)).toEqual(['custom-name', 'argv']);
  });

  it('reports every exit code 0-255', async () => {
    const codes = Array.from({ length: 256 }, (_, i) => i);
    const seen: Array<number | null> = [];
    for (let i = 0; i < codes.length; i += 32) {
      const batch = codes.slice(i, i + 32).map(async (code) => {
        const st = await spawn(PROBE, ['exit', String(code)], { method, stdout: 'ignore', stderr: 'ignore', stdin: 'ignore' }).exited;
        expect(st.signal).toBeNull();
        return st.exitCode;
      });
      seen.push(...(await Promise.all(batch)));
    }
    expect(seen).toEqual(codes);
  });

  it('reports death by signal with its name', async () => {
    const st = await spawn(PROBE, ['raise', '9'], { method }).exited;
    expect(st).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: false });
    const child = spawn('sleep', ['30'], { method });
    expect(child.kill('SIGINT')).toBe(true);
    const st2 = await child.exited;
    expect(st2.signal).toBe('SIGINT');
    expect(child.kill()).toBe(false);
    // Also once the native watch is freed (after its handles closed).
    await new Promise((r) => setTimeout(r, 20));
    expect(child.kill('SIGKILL')).toBe(false);
    expect(child.killGroup('SIGKILL')).toBe(false);
    expect(st2.rusage.userCpuMs).toBeGreaterThanOrEqual(0);
    expect(st2.rusage.maxRssKb).toBeGreaterThan(0);
    expect(st2.durationMs).toBeGreaterThan(0);
  });

  it('gives the child only fds 0-2, no blocked or ignored signals, its own process group', async () => {
    // Node ignores SIGPIPE; the child must not inherit that.
    const info = parseInfo((await execFile(PROBE, ['info'], { method })).stdout as string);
    expect(info.fds).toBe('0,1,2');
    expect(info.SigBlk).toBe('0000000000000000');
    expect(info.SigIgn).toBe('0000000000000000');
    expect(info.pgid).toBe(info.pid);
    const same = parseInfo((await execFile(PROBE, ['info'], { method, processGroup: false })).stdout as string);
    expect(Number(same.pgid)).toBe(Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[2]));
  });

  it('a child writing to a closed pipe dies of SIGPIPE (default disposition)', async () => {
    const child = spawn(PROBE, ['spew', String(64 * 1024 * 1024)], { method, stdin: 'ignore', stderr: 'ignore' });
    child.stdout!.destroy();
    const st = await child.exited;
    expect(st.signal).toBe('SIGPIPE');
  });

  it('runs in cwd, with env merged or replaced', async () => {
    const info = parseInfo((await execFile(PROBE, ['info'], { method, cwd: tmp })).stdout as string);
    expect(info.cwd).toBe(tmp);
    const viaUrl = parseInfo((await execFile(PROBE, ['info'], { method, cwd: new URL(`file://${tmp}`) })).stdout as string);
    expect(viaUrl.cwd).toBe(tmp);

    process.env.NOSHELL_PARENT_VAR = 'from-parent';
    try {
      const merged = await execFile(PROBE, ['env', 'NOSHELL_PARENT_VAR', 'ADDED', 'HOME'], { method, env: { ADDED: 'x y', HOME: undefined } });
      expect(nulFields(merged.stdout as string)).toEqual(['NOSHELL_PARENT_VAR=from-parent', 'ADDED=x y', 'HOME']);
      const inherited = await execFile(PROBE, ['env', 'NOSHELL_PARENT_VAR'], { method });
      expect(nulFields(inherited.stdout as string)).toEqual(['NOSHELL_PARENT_VAR=from-parent']);
      const only = await execFile(PROBE, ['env', 'NOSHELL_PARENT_VAR', 'ADDED', 'PATH'], { method, env: { ADDED: '1' }, extendEnv: false });
      expect(nulFields(only.stdout as string)).toEqual(['NOSHELL_PARENT_VAR', 'ADDED=1', 'PATH']);
    } finally {
      delete process.env.NOSHELL_PARENT_VAR;
    }
  });

  it('looks relative PATH entries up in the child cwd, as execvp in the child would', async () => {
    const dir = path.dirname(PROBE);
    for (const PATH of ['', '.', `/nonexistent:.`]) {
      const r = await execFile('probe', ['argv'], { method, cwd: dir, env: { PATH } });
      expect(nulFields(r.stdout as string)).toEqual(['probe', 'argv']);
    }
    await expect(execFile('probe', [], { method, cwd: tmp, env: { PATH: '.' } })).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('looks programs up in the child PATH', async () => {
    const r = await execFile('probe', ['argv'], { method, env: { PATH: `/nonexistent:${path.dirname(PROBE)}` } });
    expect(nulFields(r.stdout as string)).toEqual(['probe', 'argv']);
    await expect(execFile('probe', [], { method, env: { PATH: '/nonexistent' } })).rejects.toMatchObject({ code: 'ENOENT' });
    // Without env, the PATH is process.env's as it is now.
    const saved = process.env.PATH;
    process.env.PATH = `${path.dirname(PROBE)}:${saved}`;
    try {
      expect(nulFields((await execFile('probe', ['argv'], { method })).stdout as string)).toEqual(['probe', 'argv']);
    } finally {
      process.env.PATH = saved;
    }
    await expect(execFile('probe', [], { method })).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('wires stdin, 2>&1, ignore, inherit and raw fds', async () => {
    const cat = await execFile(PROBE, ['cat'], { method, input: 'hello\0world' });
    expect(cat.stdout).toBe('hello\0world');

    const merged = await execFile(PROBE, ['both'], { method, stderr: 'stdout' });
    expect(merged.stdout).toBe('out1\nerr1\nout2\n');
    expect(merged.stderr).toBe('');

    const ignored = spawn(PROBE, ['both'], { method, stdout: 'ignore', stderr: 'ignore' });
    expect(ignored.stdout).toBeNull();
    expect(ignored.stderr).toBeNull();
    expect((await ignored.exited).exitCode).toBe(0);

    const file = path.join(tmp, `out-${method}.txt`);
    const fd = openSync(file, 'w');
    try {
      const st = await spawn(PROBE, ['both'], { method, stdout: fd, stderr: fd }).exited;
      expect(st.exitCode).toBe(0);
    } finally {
      closeSync(fd);
    }
    expect(readFileSync(file, 'utf8')).toBe('out1\nerr1\nout2\n');

    const inheriting = spawn('sleep', ['5'], { method, stdout: 'inherit', stderr: 'inherit' });
    try {
      expect(readlinkSync(`/proc/${inheriting.pid}/fd/1`)).toBe(readlinkSync('/proc/self/fd/1'));
      expect(readlinkSync(`/proc/${inheriting.pid}/fd/0`)).toBe(readlinkSync(`/proc/self/fd/${fdOf(inheriting.stdin)}`));
    } finally {
      inheriting.kill('SIGKILL');
      await inheriting.exited;
    }
  });

  it('turns exec failures into SpawnError, never an exit code', async () => {
    const missing = '/nonexistent/program';
    const err = catchSync(() => spawn(missing, ['a'], { method }));
    expect(err).toBeInstanceOf(SpawnError);
    expect(err).toMatchObject({ code: 'ENOENT', errno: -2, syscall: `spawn ${missing}`, path: missing, spawnargs: ['a'] });

    const noExec = path.join(tmp, 'not-executable');
    writeFileSync(noExec, '#!/bin/sh\necho hi\n');
    chmodSync(noExec, 0o644);
    // Even root needs an execute bit somewhere to execve().
    expect(catchSync(() => spawn(noExec, [], { method }))).toMatchObject({ code: 'EACCES', errno: -13 });
    expect(catchSync(() => spawn(tmp, [], { method }))).toMatchObject({ code: 'EACCES' });

    const garbage = path.join(tmp, 'garbage');
    writeFileSync(garbage, 'this is not a program\n');
    chmodSync(garbage, 0o755);
    // execvp would run this through /bin/sh; noshell never does.
    expect(catchSync(() => spawn(garbage, [], { method }))).toMatchObject({ code: 'ENOEXEC', errno: -8, path: garbage });

    const badCwd = catchSync(() => spawn(PROBE, ['info'], { method, cwd: path.join(tmp, 'missing-dir') }));
    expect(badCwd).toMatchObject({ code: 'ENOENT', step: 'chdir' });
    expect((badCwd as Error).message).toContain('missing-dir');
  });

  it('timeout kills the whole process group, grandchildren too', async () => {
    const pidFile = path.join(tmp, `gc-${method}.pid`);
    const child = spawn(PROBE, ['group', pidFile, '30'], { method, timeout: 300 });
    const st = await child.exited;
    expect(st).toMatchObject({ timedOut: true, signal: 'SIGTERM', exitCode: null });
    expect(st.durationMs).toBeGreaterThanOrEqual(250);
    const grandchild = readPid(pidFile);
    expect(await waitFor(() => !isAlive(grandchild))).toBe(true);
  });

  it('SIGKILLs a child that ignores SIGTERM after forceKillAfter, its group with it', async () => {
    const pidFile = path.join(tmp, `gc-term-${method}.pid`);
    const child = spawn(PROBE, ['group', pidFile, '30', 'ignore-term-all'], { method, timeout: 200, forceKillAfter: 300 });
    const st = await child.exited;
    expect(st).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
    expect(st.durationMs).toBeGreaterThanOrEqual(450);
    const grandchild = readPid(pidFile);
    expect(await waitFor(() => !isAlive(grandchild))).toBe(true);
  });

  it('a timeout bounds a child that left its process group (it was signalled by group only)', async () => {
    // Before: kill(-pid) missed it and it ran its full 4 s with timedOut: true.
    const st = await spawn(PROBE, ['leavegroup', '4'], { method, timeout: 300, forceKillAfter: 300, stdout: 'ignore' }).exited;
    expect(st).toMatchObject({ timedOut: true, signal: 'SIGTERM', exitCode: null });
    expect(st.durationMs).toBeLessThan(2000);
    const stubborn = await spawn(PROBE, ['leavegroup', '4', 'ignore-term'], { method, timeout: 200, forceKillAfter: 200, stdout: 'ignore' }).exited;
    expect(stubborn).toMatchObject({ timedOut: true, signal: 'SIGKILL', exitCode: null });
    expect(stubborn.durationMs).toBeLessThan(2000);
  });

  it('exec: a timeout bounds a child that left its process group', async () => {
    const r = await execFile(PROBE, ['leavegroup', '4'], { method, timeout: 300, forceKillAfter: 300, reject: false });
    expect(r).toMatchObject({ timedOut: true, signal: 'SIGTERM', stdout: 'left\n' });
    expect(r.durationMs).toBeLessThan(2000);
  });

  it('after a timeout, what is left of the group dies with the leader', async () => {
    // The grandchild ignores SIGTERM; the leader dies of it. The rest of the
    // group is SIGKILLed as the leader is reaped, not forceKillAfter later.
    const pidFile = path.join(tmp, `gc-rest-${method}.pid`);
    const child = spawn(PROBE, ['group', pidFile, '30', 'ignore-term'], { method, timeout: 200, forceKillAfter: 60_000 });
    const st = await child.exited;
    expect(st).toMatchObject({ timedOut: true, signal: 'SIGTERM' });
    const grandchild = readPid(pidFile);
    expect(await waitFor(() => !isAlive(grandchild), 2000)).toBe(true);
    expect(child.killGroup('SIGKILL')).toBe(false);
  });

  it('AbortSignal kills the child; an aborted signal spawns nothing', async () => {
    const ac = new AbortController();
    const child = spawn('sleep', ['30'], { method, signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    const st = await child.exited;
    expect(st).toMatchObject({ aborted: true, timedOut: false, signal: 'SIGTERM' });

    const done = new AbortController();
    done.abort(new Error('stop'));
    expect(catchSync(() => spawn('sleep', ['30'], { method, signal: done.signal }))).toMatchObject({ message: 'stop' });
  });
});

describe('alongside node:child_process', () => {
  it('both work at once and each gets its own exit codes', async () => {
    const cp = promisify(cpExecFile);
    const jobs: Array<Promise<unknown>> = [];
    for (let i = 0; i < 20; i++) {
      jobs.push(cp(PROBE, ['argv', `cp-${i}`]).then((r) => expect(nulFields(r.stdout)).toEqual([PROBE, 'argv', `cp-${i}`])));
      jobs.push(cp(PROBE, ['exit', '3']).then(() => expect.unreachable(), (e) => expect(e.code).toBe(3)));
      jobs.push(spawn(PROBE, ['exit', String(i)], { stdout: 'ignore' }).exited.then((s) => expect(s.exitCode).toBe(i)));
    }
    await Promise.all(jobs);
  });
});

function catchSync(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

function fdOf(stream: unknown): number {
  return (stream as { _handle: { fd: number } })._handle.fd;
}
