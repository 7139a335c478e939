// The `nice` spawn option: the child's own nice value, read back from its
// /proc/self/stat, on every spawn path (spawn, the executor's jobs, runCheck,
// a runner's checks), and what it refuses.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { CheckRunner, execFile, runCheck, spawn } from '../src/index';
import { asNobody, isRoot, NOBODY, removeUnprivilegedCopy, unprivilegedScript } from './unprivileged';

/** Field 19 of a /proc/PID/stat line: the nice value. */
function niceOf(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[16]);
}

const own = os.getPriority();

describe('nice', () => {
  if (!isRoot) console.warn('skipped: a nice value below this process\'s, and the unprivileged refusal, need root');
  afterAll(() => removeUnprivilegedCopy());

  for (const method of ['auto', 'vfork', 'fork'] as const) {
    it(`${method}: the child runs at the nice value asked for; left out, at this process's`, async () => {
      for (const nice of [19, 7, own]) {
        const r = await execFile('cat', ['/proc/self/stat'], { nice, method });
        expect(niceOf(r.stdout)).toBe(nice);
      }
      expect(niceOf((await execFile('cat', ['/proc/self/stat'], { method })).stdout)).toBe(own);
      // This process is not changed by it.
      expect(os.getPriority()).toBe(own);
    });
  }

  it('reaches a check started by runCheck, and every check of a runner (the executor thread\'s jobs)', async () => {
    const r = await runCheck('cat /proc/self/stat', { nice: 12 });
    expect(niceOf(r.stdout)).toBe(12);
    const runner = new CheckRunner({ nice: 5 });
    const seen = new Map<string, number>();
    const done = new Promise<void>((resolve) => {
      runner.on('result', (res: { id: string; stdout: string }) => {
        seen.set(res.id, niceOf(res.stdout));
        if (seen.size === 2) resolve();
      });
    });
    // A check's first run falls somewhere in its first interval.
    runner.add({ id: 'runner-default', command: ['cat', '/proc/self/stat'], interval: 500 });
    runner.add({ id: 'own', command: ['cat', '/proc/self/stat'], interval: 500, nice: 15 });
    runner.start();
    await done;
    await runner.stop();
    expect(Object.fromEntries(seen)).toEqual({ 'runner-default': 5, own: 15 });
  });

  it.runIf(isRoot)('root may lower it, and does so before it drops to another user', async () => {
    const r = await execFile('cat', ['/proc/self/stat'], { nice: -5 });
    expect(niceOf(r.stdout)).toBe(-5);
    const asNobody = await execFile('cat', ['/proc/self/stat'], { nice: -20, uid: NOBODY, gid: NOBODY });
    expect(niceOf(asNobody.stdout)).toBe(-20);
  });

  it.runIf(isRoot)('an unprivileged process asking for less than its own gets EACCES at setpriority, and no child', () => {
    const script = unprivilegedScript('nice-unprivileged.js', `
      const out = {};
      noshell.execFile('cat', ['/proc/self/stat'], { nice: 3 })
        .then((r) => { out.raised = r.stdout; return noshell.execFile('true', [], { nice: -1 }); })
        .then(() => { out.lowered = 'ran'; }, (e) => { out.lowered = { name: e.name, code: e.code, step: e.step, message: e.message }; })
        .then(() => {
          out.children = require('node:fs').readFileSync('/proc/self/task/' + process.pid + '/children', 'utf8');
          console.log(JSON.stringify(out));
        });
    `);
    const out = JSON.parse(execFileSync(asNobody[0], [...asNobody.slice(1), process.execPath, script], { encoding: 'utf8' })) as {
      raised: string; lowered: { name: string; code: string; step: string; message: string }; children: string;
    };
    expect(niceOf(out.raised)).toBe(3);
    expect(out.lowered).toMatchObject({ name: 'SpawnError', code: 'EACCES', step: 'setpriority' });
    expect(out.lowered.message).toContain('at setpriority');
    expect(out.children).toBe('');
  });

  it('refuses what is not a nice value, and posix_spawn, before anything runs', () => {
    for (const bad of [20, -21, 100]) expect(() => spawn('true', [], { nice: bad })).toThrow(RangeError);
    for (const bad of [1.5, NaN, Infinity, '5', null, true]) {
      expect(() => spawn('true', [], { nice: bad as never })).toThrow(/nice must be a whole number from -20 to 19/);
    }
    expect(() => spawn('true', [], { nice: 5, method: 'posix_spawn' })).toThrow("method 'posix_spawn' cannot set nice");
  });

  it('a bad value: runCheck rejects; a check of a runner reports UNKNOWN "Check definition error", as for any spawn option', async () => {
    await expect(runCheck('true', { nice: 20 })).rejects.toThrow(RangeError);
    const runner = new CheckRunner();
    const res = new Promise<{ state: number; output: string }>((resolve) => runner.once('result', resolve));
    runner.add({ id: 'x', command: ['true'], interval: 200, nice: 0.5 });
    runner.start();
    const r = await res;
    await runner.stop();
    expect(r.state).toBe(3);
    expect(r.output).toBe('Check definition error: nice must be a whole number from -20 to 19, got number 0.5');
  });
});
