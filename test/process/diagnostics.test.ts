// What ran, as a subscriber of node:diagnostics_channel sees it and as
// NODE_DEBUG=noshell prints it: one start and one exit per child, paired by
// id, on each spawn path (the executor thread, the event loop), for children
// that could not start too.
import { spawnSync } from 'node:child_process';
import dc from 'node:diagnostics_channel';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exec, execFile, popen, runCheck, spawn, SpawnError } from '../../src/index';
import type { ExitMessage, StartMessage } from '../../src/process/diagnostics';
import { _setLoopOnly } from '../../src/process/exec';

const ROOT = path.resolve(__dirname, '..', '..');
let starts: StartMessage[] = [];
let exits: ExitMessage[] = [];
const onStart = (m: unknown) => starts.push(m as StartMessage);
const onExit = (m: unknown) => exits.push(m as ExitMessage);

beforeEach(() => {
  starts = [];
  exits = [];
  dc.subscribe('noshell:start', onStart);
  dc.subscribe('noshell:exit', onExit);
});
afterEach(() => {
  dc.unsubscribe('noshell:start', onStart);
  dc.unsubscribe('noshell:exit', onExit);
});

describe("node:diagnostics_channel 'noshell:start' and 'noshell:exit'", () => {
  it('exec on the executor: the start as it is queued (no pid yet), the exit with pid, status and rusage', async () => {
    const r = await execFile('/bin/sh', ['-c', 'exit 3'], { reject: false });
    expect(starts).toHaveLength(1);
    expect(starts[0]).toMatchObject({ file: '/bin/sh', argv: ['/bin/sh', '-c', 'exit 3'], path: 'executor', method: 'auto', pid: null, uid: null, gid: null, cwd: null });
    expect(exits).toHaveLength(1);
    expect(exits[0]).toMatchObject({ id: starts[0].id, path: 'executor', error: null });
    expect(exits[0].status).toMatchObject({ pid: r.pid, exitCode: 3, signal: null, timedOut: false });
    expect(exits[0].status!.rusage.maxRssKb).toBeGreaterThan(0);
  });

  it('spawn and popen on the event loop: the start with its pid, the exit once reaped; ids pair them', async () => {
    const child = spawn('/bin/sleep', ['0.1'], { method: 'vfork' });
    const p = popen(['/bin/echo', 'hi'], 'r');
    expect(starts.map((s) => [s.path, s.pid, s.method])).toEqual([['loop', child.pid, 'vfork'], ['loop', p.pid, 'auto']]);
    for await (const _ of p.lines()) { /* read to the end */ }
    await p.close();
    await child.exited;
    expect(exits).toHaveLength(2);
    const byId = new Map(exits.map((e) => [e.id, e]));
    expect(byId.get(starts[0].id)!.status).toMatchObject({ pid: child.pid, exitCode: 0 });
    expect(byId.get(starts[1].id)!.status).toMatchObject({ pid: p.pid, exitCode: 0 });
    expect(new Set(starts.map((s) => s.id)).size).toBe(2);
  });

  it('exec with the executor off goes by the loop path, with the pid at its start', async () => {
    const was = _setLoopOnly(true);
    try {
      const r = await exec(['/bin/echo', 'x']);
      expect(starts).toEqual([expect.objectContaining({ path: 'loop', pid: r.pid })]);
      expect(exits[0].status).toMatchObject({ pid: r.pid, exitCode: 0 });
    } finally {
      _setLoopOnly(was);
    }
  });

  it('a program that cannot start: a start, then an exit with the SpawnError and no status, on both paths', async () => {
    expect(() => spawn('/nonexistent/prog')).toThrow(SpawnError);
    await expect(exec(['/nonexistent/prog'])).rejects.toBeInstanceOf(SpawnError);
    expect(starts.map((s) => s.path)).toEqual(['loop', 'executor']);
    expect(exits.map((e) => [e.status, (e.error as SpawnError | null)?.code])).toEqual([[null, 'ENOENT'], [null, 'ENOENT']]);
    expect(exits.map((e) => e.id)).toEqual(starts.map((s) => s.id));
  });

  it('a timeout and a check show as they ended; the identity a child runs as is in its start', async () => {
    await exec(['/bin/sleep', '5'], { timeout: 100, reject: false });
    await runCheck(['/bin/sh', '-c', 'echo "WARNING: x"; exit 1']);
    expect(exits[0].status).toMatchObject({ timedOut: true, signal: 'SIGTERM' });
    expect(exits[1].status).toMatchObject({ exitCode: 1 });
    if (process.getuid?.() === 0) {
      await exec(['/bin/true'], { uid: 65534, gid: 65534 });
      expect(starts[2]).toMatchObject({ uid: 65534, gid: 65534 });
    }
  });
});

describe('NODE_DEBUG=noshell', () => {
  it('prints a line per start and exit to stderr; without it, nothing', () => {
    const script = `const { exec } = require(${JSON.stringify(path.join(ROOT, 'dist', 'index.js'))});
      exec(['/bin/sh', '-c', 'exit 2'], { reject: false }).then(() => exec(['/nonexistent/x']).catch(() => {}));`;
    const on = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, NODE_DEBUG: 'noshell' }, encoding: 'utf8' });
    expect(on.status).toBe(0);
    const lines = on.stderr.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^NOSHELL \d+: start #1 \["\/bin\/sh","-c","exit 2"\] via executor \(auto\)$/);
    expect(lines[1]).toMatch(/^NOSHELL \d+: exit #1 pid \d+: exit 2 in [\d.]+ ms \(cpu [\d.]+ ms user, [\d.]+ ms system, maxrss \d+ KiB\)$/);
    expect(lines[2]).toMatch(/^NOSHELL \d+: start #2 \["\/nonexistent\/x"\] via executor/);
    expect(lines[3]).toMatch(/^NOSHELL \d+: exit #2 \["\/nonexistent\/x"\]: not started: .*ENOENT/);
    const off = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, NODE_DEBUG: '' }, encoding: 'utf8' });
    expect(off.status).toBe(0);
    expect(off.stderr).toBe('');
  });
});
