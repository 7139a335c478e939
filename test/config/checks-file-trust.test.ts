// As root, `noshell run` reads only a checks file nobody else could have
// written or swapped (issue 17): its checks may run as any user, so whoever
// can change the file — or a directory on the way to it, or a symlink, or
// the directories the symlink's target goes through — would choose what runs
// as whom. A sticky directory (as /tmp) is fine with entries of root's in it.
// As another user the rule does not apply: the checks run as that user only.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, lchownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadChecksFile } from '../../src/config/checks-file';
import { waitFor } from '../helpers';
import { asNobody, isRoot, NOBODY, removeUnprivilegedCopy, unprivilegedPackage } from '../unprivileged';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const CHECKS = JSON.stringify({ checks: [{ id: 'a', command: '/bin/true', interval: '1h' }] });

let tmp = '';
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-trust-'));
  // Root's, 0755: trusted, and nobody can reach the files in it.
  chmodSync(tmp, 0o755);
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
  removeUnprivilegedCopy();
});

let seq = 0;
function dir(mode: number, owner = 0): string {
  const d = path.join(tmp, `d${seq++}`);
  mkdirSync(d);
  chmodSync(d, mode);
  chownSync(d, owner, owner);
  return d;
}

function file(at: string, mode = 0o644, owner = 0): string {
  const f = path.join(at, `checks-${seq++}.json`);
  writeFileSync(f, CHECKS);
  chmodSync(f, mode);
  chownSync(f, owner, owner);
  return f;
}

function refusal(f: string): string {
  try {
    loadChecksFile(f);
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return (err as Error).message;
  }
  throw new Error(`${f} was accepted`);
}

describe.runIf(isRoot)('as root, a checks file others could change is refused', () => {
  it('a root-owned 0644 file in a 0755 directory is read, directly and through a symlink in one', () => {
    const f = file(dir(0o755));
    expect(loadChecksFile(f).checks).toHaveLength(1);
    const links = dir(0o755);
    symlinkSync(f, path.join(links, 'abs.json'));
    symlinkSync(path.join('..', path.basename(path.dirname(f)), path.basename(f)), path.join(links, 'rel.json'));
    expect(loadChecksFile(path.join(links, 'abs.json')).checks).toHaveLength(1);
    expect(loadChecksFile(path.join(links, 'rel.json')).checks).toHaveLength(1);
  });

  it('a file others (or the group) may write', () => {
    const d = dir(0o755);
    const f = file(d, 0o666);
    expect(refusal(f)).toBe(`refusing to read ${f} as root: ${f} has mode 0666: others may write it`);
    chmodSync(f, 0o664);
    expect(refusal(f)).toBe(`refusing to read ${f} as root: ${f} has mode 0664: others may write it`);
  });

  it('a file of another user', () => {
    const f = file(dir(0o755), 0o644, NOBODY);
    expect(refusal(f)).toBe(`refusing to read ${f} as root: ${f} is owned by uid ${NOBODY}, not root`);
  });

  it('a file in a directory others may write (no sticky bit), however far up', () => {
    const open = dir(0o777);
    const f = file(open);
    expect(refusal(f)).toBe(`refusing to read ${f} as root: ${open} has mode 0777: others may write it`);
    const deep = path.join(open, 'a', 'b');
    mkdirSync(deep, { recursive: true, mode: 0o755 });
    expect(refusal(file(deep))).toContain(`: ${open} has mode 0777: others may write it`);
  });

  it('a symlink whose target is in a directory others may write', () => {
    const open = dir(0o777);
    const target = file(open);
    const link = path.join(dir(0o755), 'checks.json');
    symlinkSync(target, link);
    expect(refusal(link)).toBe(`refusing to read ${link} as root: ${open} has mode 0777: others may write it`);
  });

  it('a symlink in a directory others may write, to a good file; a directory symlink on the way', () => {
    const good = file(dir(0o755));
    const open = dir(0o777);
    const link = path.join(open, 'checks.json');
    symlinkSync(good, link);
    expect(refusal(link)).toBe(`refusing to read ${link} as root: ${open} has mode 0777: others may write it`);
    // /open/sub -> a good directory: `open` can repoint `sub`.
    symlinkSync(path.dirname(good), path.join(open, 'sub'));
    const via = path.join(open, 'sub', path.basename(good));
    expect(refusal(via)).toBe(`refusing to read ${via} as root: ${open} has mode 0777: others may write it`);
  });

  it('in a sticky world-writable directory (as /tmp): root\'s file is read, another user\'s file or symlink is not', () => {
    const sticky = dir(0o1777);
    expect(loadChecksFile(file(sticky)).checks).toHaveLength(1);
    const theirs = file(sticky, 0o644, NOBODY);
    expect(refusal(theirs)).toContain(`${theirs} is owned by uid ${NOBODY}, not root`);
    const link = path.join(sticky, 'theirs-link.json');
    symlinkSync(file(dir(0o755)), link);
    lchownSync(link, NOBODY, NOBODY);
    expect(refusal(link)).toBe(`refusing to read ${link} as root: ${link} (a symbolic link) is owned by uid ${NOBODY}, not root`);
    // And a directory of theirs in it.
    const sub = path.join(sticky, 'sub');
    mkdirSync(sub, { mode: 0o755 });
    chownSync(sub, NOBODY, NOBODY);
    expect(refusal(file(sub))).toContain(`${sub} is owned by uid ${NOBODY}, not root`);
  });

  it('a symlink loop is an error, not a hang', () => {
    const d = dir(0o755);
    symlinkSync('b.json', path.join(d, 'a.json'));
    symlinkSync('a.json', path.join(d, 'b.json'));
    expect(refusal(path.join(d, 'a.json'))).toContain('more than 40 symbolic links');
  });

  it('`noshell run --check` exits 2 with the reason; a missing file is still "cannot read"', () => {
    const open = dir(0o777);
    const f = file(open);
    const r = spawnSync(process.execPath, [CLI, 'run', '--check', f], { encoding: 'utf8', timeout: 10_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`refusing to read ${f} as root: ${open} has mode 0777: others may write it`);
    const missing = spawnSync(process.execPath, [CLI, 'run', '--check', path.join(dir(0o755), 'none.json')], { encoding: 'utf8', timeout: 10_000 });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/none\.json: cannot read: ENOENT/);
  });

  it('on SIGHUP, a file made writable by others is not reloaded: logged, the checks go on', async () => {
    const d = dir(0o755);
    const f = file(d);
    const child = spawn(process.execPath, [CLI, 'run', '--allow-root', f], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b) => (stderr += b));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      expect(await waitFor(() => stderr.includes('1 check from'), 10_000), stderr).toBe(true);
      chmodSync(f, 0o666);
      child.kill('SIGHUP');
      expect(await waitFor(() => stderr.includes('reload of'), 10_000), stderr).toBe(true);
      expect(stderr).toContain(`reload of ${f} failed, the running checks go on:\nrefusing to read ${f} as root: ${f} has mode 0666`);
      // Trusted again: reloaded.
      chmodSync(f, 0o644);
      child.kill('SIGHUP');
      expect(await waitFor(() => stderr.includes(`reloaded ${f}`), 10_000), stderr).toBe(true);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(143);
  }, 30_000);

  it('as another user (nobody) the rule does not apply: the same file is read', () => {
    const open = dir(0o777);
    const f = file(open, 0o666);
    expect(refusal(f)).toContain('others may write it');
    const cli = path.join(path.dirname(unprivilegedPackage()), 'cli.js');
    const r = spawnSync(asNobody[0], [...asNobody.slice(1), process.execPath, cli, 'run', '--check', f], { encoding: 'utf8', timeout: 10_000 });
    expect(r.stdout).toBe(`${f}: valid, 1 check\n`);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('`link/..` in the path is the parent of the link\'s target, as the kernel takes it: an attacker\'s directory behind a trusted link is refused', () => {
    const trusted = dir(0o755);
    const evil = dir(0o777, NOBODY);
    mkdirSync(path.join(evil, 'sub'));
    const decoy = file(trusted);
    // The attacker's file, at the name the path reaches through the link.
    const planted = path.join(evil, path.basename(decoy));
    writeFileSync(planted, CHECKS.replace('/bin/true', '/bin/false'));
    chownSync(planted, NOBODY, NOBODY);
    symlinkSync(path.join(evil, 'sub'), path.join(trusted, 'link'));
    // Spelled out: path.join would fold the `..` away as text, the mistake under test.
    const viaLink = `${trusted}/link/../${path.basename(decoy)}`;
    expect(refusal(viaLink)).toMatch(new RegExp(`refusing to read .* as root: ${evil.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is owned by uid ${NOBODY}`));
    // Relative, from inside the trusted directory: the same walk.
    const cwd = process.cwd();
    process.chdir(trusted);
    try {
      expect(refusal(`link/../${path.basename(decoy)}`)).toContain(`${evil} is owned by uid ${NOBODY}`);
      expect(loadChecksFile(path.basename(decoy)).checks).toHaveLength(1);
    } finally {
      process.chdir(cwd);
    }
  });

  it('root by its effective uid alone (real uid nobody, euid 0) still gets the rule', () => {
    const f = file(dir(0o777), 0o666);
    const r = spawnSync('setpriv', [`--ruid=${NOBODY}`, '--euid=0', `--rgid=${NOBODY}`, '--clear-groups', process.execPath, CLI, 'run', '--check', f],
      { encoding: 'utf8', timeout: 10_000 });
    expect(r.stderr).toContain(`refusing to read ${f} as root`);
    expect(r.status).toBe(2);
  });

  it('a /proc magic link (/proc/self/fd/N) whose text names a trusted file but opens another one is refused', () => {
    const decoy = file(dir(0o755));
    const mnt = dir(0o755);
    const evil = JSON.stringify({ checks: [{ id: 'x', command: '/bin/true', interval: '1h' }, { id: 'y', command: '/bin/true', interval: '1h' }] });
    // In a mount namespace of its own: the attacker's file at the decoy's path inside a
    // tmpfs, opened as fd 3, the tmpfs lazily unmounted — /proc/self/fd/3 then reads as the
    // decoy's path while it opens the attacker's file.
    const script = 'set -e; m=$1; f=$2; shift 2; mount -t tmpfs tmpfs "$m"; mkdir -p "$m$(dirname "$f")"; ' +
      'printf %s "$EVIL" > "$m$f"; chown 65534:65534 "$m$f"; chmod 666 "$m$f"; exec 3< "$m$f"; umount -l "$m"; ' +
      'readlink /proc/self/fd/3 >&2; exec "$@" /proc/self/fd/3';
    const r = spawnSync('unshare', ['-m', 'sh', '-c', script, 'sh', mnt, decoy, process.execPath, CLI, 'run', '--check'],
      { encoding: 'utf8', timeout: 10_000, env: { ...process.env, EVIL: evil } });
    if (r.stderr.includes('unshare failed') || r.stderr.includes('mount:')) {
      console.log(`skipped: no mount namespace here (${r.stderr.trim()})`);
      expect(process.env.CI).toBeUndefined();
      return;
    }
    expect(r.stderr.split('\n')[0]).toBe(decoy);
    expect(r.stderr).toContain('refusing to read /proc/self/fd/3 as root: it opens another file than its path names');
    expect(r.stdout + r.stderr).not.toContain('valid, 2 checks');
    expect(r.status).toBe(2);
  });

  it('real uid 0 with an unprivileged euid: only root\'s files are trusted (that euid\'s own are not)', () => {
    const d = dir(0o755, NOBODY);
    const f = file(d, 0o644, NOBODY);
    const cli = path.join(path.dirname(unprivilegedPackage()), 'cli.js');
    const r = spawnSync('setpriv', ['--ruid=0', `--euid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, cli, 'run', '--check', f],
      { encoding: 'utf8', timeout: 10_000 });
    expect(r.stderr).toContain(`refusing to read ${f} as root: ${d} is owned by uid ${NOBODY}, not root`);
    expect(r.status).toBe(2);
  });
});
