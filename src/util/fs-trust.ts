// Whether a path names what its owner put there, or what someone else could
// have put or could still swap in: for a privileged reader (the bench cache it
// runs binaries from, the checks file `noshell run` reads as root). As
// OpenSSH's secure-path checks: every directory on the way, up to /, must be
// ours or root's and not writable by group or others — unless it has the
// sticky bit (as /tmp), where others may add entries but not rename or remove
// ours: the entry below it must then be ours or root's, and the walk checks
// that entry too. Only the owner of a trusted directory can change it, so the
// answer still holds when the caller opens the path afterwards.
import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import path from 'node:path';
import { actingUid } from './privilege';

/**
 * Whose files are trusted besides root's: ours — unless we act as root by
 * either uid (real uid 0 with an unprivileged euid survives execve: a file
 * of that euid's owner would still run things as root).
 */
function trustedUid(): number {
  return actingUid() === 0 ? 0 : process.geteuid?.() ?? 0;
}

/** The device and inode the walk ended at: what opening the path must give. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

/** Linux's MAXSYMLINKS: more hops than the kernel would follow is a loop. */
const MAX_LINKS = 40;

function modeText(st: Stats): string {
  return (st.mode & 0o7777).toString(8).padStart(4, '0');
}

function whose(uid: number): string {
  return uid === 0 ? 'root' : `uid ${uid} or root`;
}

function badOwner(st: Stats, uid: number): boolean {
  return st.uid !== uid && st.uid !== 0;
}

/** Why the directory `d` (its lstat `st`) lets others change its entries, or null. */
function untrustedDir(d: string, st: Stats, uid: number): string | null {
  if (!st.isDirectory()) return `${d} is not a directory`;
  if (badOwner(st, uid)) return `${d} is owned by uid ${st.uid}, not ${whose(uid)}`;
  if ((st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0) return `${d} has mode ${modeText(st)}: others may write it`;
  return null;
}

/**
 * Why `dir` (an existing real path: no symlinks) and the directories above it
 * may not be trusted, or null.
 */
export function untrustedPath(dir: string): string | null {
  const uid = trustedUid();
  for (let d = dir; ; d = path.dirname(d)) {
    const problem = untrustedDir(d, lstatSync(d), uid);
    if (problem !== null) return problem;
    if (d === path.dirname(d)) return null;
  }
}

function components(p: string): string[] {
  return p.split('/').filter((c) => c !== '' && c !== '.');
}

/**
 * Why the file `file` may not be trusted, or null. Resolved one component at
 * a time, as the kernel does, so every symlink on the way counts: the
 * directory holding it and the link itself must be trusted, and then the
 * directories its target goes through, down to the file — which must be ours
 * or root's and not writable by group or others. An entry that is not a
 * regular file is left to the caller to refuse. Errors of lstat (ENOENT…) are
 * thrown. The walk follows a link's text; open() follows a /proc "magic" link
 * (/proc/self/fd/N, /proc/PID/root) to the object behind it, which the text
 * need not name (a lazily unmounted file, another mount namespace): the
 * caller compares what it opened with `found`.
 */
export function untrustedFile(file: string, found?: FileIdentity): string | null {
  const uid = trustedUid();
  let dir = '/';
  let problem = untrustedDir(dir, lstatSync(dir), uid);
  if (problem !== null) return problem;
  // A stack: the next component last, so a link's target goes in front of the rest.
  // Not path.resolve(): it folds `link/..` as text, where the kernel follows
  // the link first and takes the parent of its target (a trusted link to an
  // attacker's directory made `etc/link/../checks.json` read the attacker's file).
  // process.cwd() is a real path (getcwd), so it is walked like any other.
  const todo = components(path.isAbsolute(file) ? file : `${process.cwd()}/${file}`).reverse();
  let links = 0;
  while (todo.length > 0) {
    const name = todo.pop()!;
    // `dir` is a real path, so `..` is its parent, as the kernel takes it.
    if (name === '..') {
      dir = path.dirname(dir);
      continue;
    }
    const p = path.join(dir, name);
    const st = lstatSync(p);
    if (st.isSymbolicLink()) {
      if (++links > MAX_LINKS) return `${file}: more than ${MAX_LINKS} symbolic links`;
      // In a sticky directory the link's owner may replace it.
      if (badOwner(st, uid)) return `${p} (a symbolic link) is owned by uid ${st.uid}, not ${whose(uid)}`;
      const target = readlinkSync(p);
      if (path.isAbsolute(target)) dir = '/';
      todo.push(...components(target).reverse());
      continue;
    }
    if (todo.length === 0 && !st.isDirectory()) {
      if (!st.isFile()) return null;
      if (badOwner(st, uid)) return `${p} is owned by uid ${st.uid}, not ${whose(uid)}`;
      if ((st.mode & 0o022) !== 0) return `${p} has mode ${modeText(st)}: others may write it`;
      if (found !== undefined) {
        found.dev = st.dev;
        found.ino = st.ino;
      }
      return null;
    }
    problem = untrustedDir(p, st, uid);
    if (problem !== null) return problem;
    dir = p;
  }
  return null;
}
