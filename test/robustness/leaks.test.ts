import { describe, expect, it } from 'vitest';
import { exec, spawn } from '../../src/index';
import { childProcesses, openFds, PROBE, waitFor } from '../helpers';

describe('no fd growth, no zombies', () => {
  it('after 2,000 spawns: same fds, no children left', async () => {
    // Warm up lazily created handles (signal pipes, /dev/null, stream internals).
    await exec(['/bin/true']);
    const fdsBefore = openFds().length;
    const total = 2000;
    let done = 0;
    const worker = async (i: number) => {
      for (let n = i; n < total; n += 8) {
        if (n % 2 === 0) {
          const st = await spawn('/bin/true', [], { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' }).exited;
          expect(st.exitCode).toBe(0);
        } else {
          const r = await exec([PROBE, 'exit', '0']);
          expect(r.exitCode).toBe(0);
        }
        done++;
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, i) => worker(i)));
    expect(done).toBe(total);
    // Sockets close on the next ticks after 'close'; give them a moment.
    expect(await waitFor(() => openFds().length <= fdsBefore, 2000)).toBe(true);
    expect(childProcesses()).toEqual([]);
  });

  it('default pipes nobody reads or writes are closed when the child exits', async () => {
    await spawn('/bin/echo', ['warm']).exited;
    const fdsBefore = openFds().length;
    for (let i = 0; i < 100; i++) {
      const st = await spawn('/bin/echo', ['unread output']).exited;
      expect(st.exitCode).toBe(0);
    }
    expect(await waitFor(() => openFds().length <= fdsBefore, 2000)).toBe(true);
  });

  it('output read after awaiting exited is still there', async () => {
    const child = spawn('/bin/echo', ['late reader']);
    await child.exited;
    const chunks: Buffer[] = [];
    for await (const chunk of child.stdout!) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('late reader\n');
  });

  it('unref() lets the process exit while a child with a timeout runs', async () => {
    const { spawnSync } = await import('node:child_process');
    const entry = require.resolve('../../dist/index.js');
    const script = `const { spawn } = require(${JSON.stringify(entry)});
      const c = spawn('sleep', ['5'], { timeout: 3000, stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' });
      c.unref(); console.log(c.pid);`;
    const t = Date.now();
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(Date.now() - t).toBeLessThan(2500);
    process.kill(Number(r.stdout.trim()), 'SIGKILL');
  });

  it('failed spawns leak nothing', async () => {
    const fdsBefore = openFds().length;
    for (let i = 0; i < 200; i++) {
      expect(() => spawn('/nonexistent/prog', [], { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })).toThrow();
      expect(() => spawn(PROBE, [], { cwd: '/nonexistent', method: i % 2 ? 'vfork' : 'fork' })).toThrow();
    }
    expect(openFds().length).toBe(fdsBefore);
    expect(childProcesses()).toEqual([]);
  });

  it('a killed child with open pipes leaves nothing behind', async () => {
    const fdsBefore = openFds().length;
    const children = Array.from({ length: 20 }, () => spawn('sleep', ['30']));
    for (const c of children) c.kill('SIGKILL');
    for (const c of children) {
      expect((await c.exited).signal).toBe('SIGKILL');
      c.stdin!.destroy();
    }
    for (const c of children) {
      await new Promise((r) => (c.stdout!.closed ? r(null) : c.stdout!.once('close', r)));
      await new Promise((r) => (c.stderr!.closed ? r(null) : c.stderr!.once('close', r)));
    }
    expect(await waitFor(() => openFds().length <= fdsBefore, 2000)).toBe(true);
    expect(childProcesses()).toEqual([]);
  });
});
