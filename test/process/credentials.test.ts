import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn, SpawnError } from '../../src/index';
import { asNobody, isRoot, NOBODY, removeUnprivilegedCopy, unprivilegedScript } from '../unprivileged';

/** Uid/Gid/Groups lines of the child's own /proc/self/status. */
async function childIds(opts: Parameters<typeof execFile>[2]): Promise<Record<string, string>> {
  const r = await execFile('cat', ['/proc/self/status'], opts);
  const out: Record<string, string> = {};
  for (const line of r.stdout.split('\n')) {
    const m = /^(Uid|Gid|Groups):(.*)$/.exec(line);
    if (m) out[m[1]] = m[2].trim().replace(/\s+/g, ' ');
  }
  return out;
}

describe('credentials', () => {
  if (!isRoot) console.warn('skipped: credential tests that change identity need root');
  // Made in beforeAll: a run whose -t filter skips this block runs neither hook, and a directory made at collection was left behind.
  let tmp = '';
  beforeAll(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-creds-'));
  });
  afterAll(() => {
    rmSync(tmp, { recursive: true, force: true });
    removeUnprivilegedCopy();
  });

  it('uid without gid is refused (it kept group 0)', () => {
    expect(() => spawn('id', [], { uid: NOBODY })).toThrow(/uid needs gid/);
    expect(() => spawn('id', [], { uid: NOBODY, groups: [1] })).toThrow(TypeError);
    expect(() => spawn('id', [], { gid: NOBODY, uid: NOBODY, groups: [-1] })).toThrow(TypeError);
    expect(() => spawn('id', [], { gid: NOBODY, uid: NOBODY, groups: 'x' as never })).toThrow(TypeError);
  });

  it('posix_spawn cannot set credentials: a TypeError, not a silent run', () => {
    expect(() => spawn('id', [], { uid: 1, gid: 1, method: 'posix_spawn' })).toThrow(TypeError);
  });

  for (const method of ['vfork', 'fork', 'auto'] as const) {
    it.runIf(isRoot)(`${method}: uid/gid drop every supplementary group of the parent`, async () => {
      const ids = await childIds({ uid: NOBODY, gid: NOBODY, method });
      expect(ids.Uid).toBe(`${NOBODY} ${NOBODY} ${NOBODY} ${NOBODY}`);
      expect(ids.Gid).toBe(`${NOBODY} ${NOBODY} ${NOBODY} ${NOBODY}`);
      expect(ids.Groups).toBe('');
    });
  }

  it.runIf(isRoot)('groups sets the supplementary groups', async () => {
    const ids = await childIds({ uid: NOBODY, gid: NOBODY, groups: [4, 24, 100] });
    expect(ids.Groups).toBe('4 24 100');
    expect(ids.Gid.split(' ')[0]).toBe(String(NOBODY));
  });

  it.runIf(isRoot)('gid alone changes the group and clears supplementary groups, uid stays', async () => {
    const ids = await childIds({ gid: NOBODY });
    expect(ids.Uid.split(' ')[0]).toBe('0');
    expect(ids.Gid.split(' ')[0]).toBe(String(NOBODY));
    expect(ids.Groups).toBe('');
  });

  it.runIf(isRoot)('PATH search runs as the child user, not the parent (skips what only root may run)', async () => {
    // /a/prog: root-only (0700) — root's access() accepts it, nobody's execve
    // gets EACCES. /b/prog: for everyone. execvp as nobody runs /b/prog.
    const a = path.join(tmp, 'a');
    const b = path.join(tmp, 'b');
    mkdirSync(a);
    mkdirSync(b);
    chmodSync(tmp, 0o755);
    copyFileSync('/bin/echo', path.join(a, 'prog'));
    copyFileSync('/bin/pwd', path.join(b, 'prog'));
    chmodSync(path.join(a, 'prog'), 0o700);
    chmodSync(path.join(b, 'prog'), 0o755);
    const env = { PATH: `${a}:${b}` };
    const asRoot = await execFile('prog', ['from-a'], { env });
    expect(asRoot.stdout).toBe('from-a\n'); // root runs /a/prog (echo)
    const asNobodyRun = await execFile('prog', [], { env, uid: NOBODY, gid: NOBODY, cwd: '/' });
    expect(asNobodyRun.stdout).toBe('/\n'); // nobody runs /b/prog (pwd)
    // Only the root-only one: nobody gets EACCES at the PATH search, like execvp.
    const err = await execFile('prog', [], { env: { PATH: a }, uid: NOBODY, gid: NOBODY }).catch((e) => e);
    expect(err).toBeInstanceOf(SpawnError);
    expect(err).toMatchObject({ code: 'EACCES', step: 'resolve' });
    const missing = await execFile('no-such-prog', [], { env, uid: NOBODY, gid: NOBODY }).catch((e) => e);
    expect(missing).toMatchObject({ code: 'ENOENT', step: 'resolve' });
    // A file nobody can stat through: a directory only root may enter.
    const c = path.join(tmp, 'c');
    mkdirSync(c, { mode: 0o700 });
    copyFileSync('/bin/true', path.join(c, 'prog'));
    chownSync(c, 0, 0);
    const hidden = await execFile('prog', [], { env: { PATH: c }, uid: NOBODY, gid: NOBODY }).catch((e) => e);
    expect(hidden).toMatchObject({ code: 'EACCES', step: 'resolve' });
  });

  it.runIf(isRoot)('a failing setgroups is a spawn error, not a child that keeps its groups', () => {
    // As nobody (no CAP_SETGID) asking for supplementary groups: setgroups
    // fails with EPERM. Before, EPERM was ignored.
    const script = unprivilegedScript('creds-setgroups.js', `
      (async () => {
        const out = {};
        try { await noshell.execFile('id', [], { uid: ${NOBODY}, gid: ${NOBODY}, groups: [${NOBODY}] }); out.groups = 'ran'; }
        catch (e) { out.groups = { name: e.name, code: e.code, step: e.step }; }
        // Its own ids and no groups: nothing to change, so it runs.
        const r = await noshell.execFile('id', ['-u'], { uid: ${NOBODY}, gid: ${NOBODY} });
        out.own = r.stdout.trim();
        // An explicit empty list asks to drop groups it cannot drop: an error
        // (it ran with the caller's groups before).
        try { await noshell.execFile('id', [], { uid: ${NOBODY}, gid: ${NOBODY}, groups: [] }); out.empty = 'ran'; }
        catch (e) { out.empty = { name: e.name, code: e.code, step: e.step }; }
        try { await noshell.execFile('id', [], { uid: 0, gid: 0 }); out.root = 'ran'; }
        catch (e) { out.root = { name: e.name, code: e.code, step: e.step }; }
        console.log(JSON.stringify(out));
      })();`);
    const out = JSON.parse(execFileSync(asNobody[0], [...asNobody.slice(1), process.execPath, script], { encoding: 'utf8' }));
    expect(out.groups).toEqual({ name: 'SpawnError', code: 'EPERM', step: 'setgroups' });
    expect(out.own).toBe(String(NOBODY));
    expect(out.empty).toEqual({ name: 'SpawnError', code: 'EPERM', step: 'setgroups' });
    expect(out.root).toEqual({ name: 'SpawnError', code: 'EPERM', step: 'setgroups' });
  });
});
