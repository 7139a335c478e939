// Where the benchmark keeps the programs it compiles and then runs (as root,
// often). A fixed name in /tmp is a gift to any other local user: they
// create it first, put their binary or a symlink in it, and we run or write
// through it. So: a cache under the user's own ~/.cache, used only while it
// is ours alone — the directory and every one above it up to / owned by us or
// root and not writable by others (a sticky /tmp aside: see fs-trust.ts) —
// else a fresh mkdtemp directory for this run.
import { lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, type Stats } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { untrustedPath } from '../../util/fs-trust';

/** Why `stats` (of a directory or a file in it) may not be trusted, or null. */
export function untrusted(stats: Stats, kind: 'directory' | 'file'): string | null {
  const uid = process.getuid?.() ?? 0;
  if (stats.isSymbolicLink()) return 'is a symbolic link';
  if (kind === 'directory' ? !stats.isDirectory() : !stats.isFile()) return `is not a ${kind}`;
  if (stats.uid !== uid) return `is owned by uid ${stats.uid}, not ${uid}`;
  // A directory others can enter may not be ours alone; a file anyone else
  // may write could be swapped under us.
  const bad = kind === 'directory' ? 0o077 : 0o022;
  if ((stats.mode & bad) !== 0) return `has mode ${(stats.mode & 0o7777).toString(8).padStart(4, '0')}`;
  return null;
}

/** $XDG_CACHE_HOME/noshell, else ~/.cache/noshell; null without an absolute base. */
export function cacheDirPath(env: NodeJS.ProcessEnv = process.env): string | null {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, 'noshell');
  const home = env.HOME ?? os.homedir();
  return home !== '' && path.isAbsolute(home) ? path.join(home, '.cache', 'noshell') : null;
}

/** The deepest existing directory at or above `p`. */
function existingAncestor(p: string): string {
  for (let d = p; ; d = path.dirname(d)) {
    try {
      lstatSync(d);
      return d;
    } catch {
      if (d === path.dirname(d)) return d;
    }
  }
}

let runDir: string | null = null;
const warned = new Set<string>();

function tempDirForRun(): string {
  if (runDir === null) {
    // mkdtemp: a new name, mode 0700, created by us; gone when we exit.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-bench-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    runDir = dir;
  }
  return runDir;
}

/**
 * A directory only this user can write: the cache if it checks out
 * (created 0700 if missing; never chmod-ed or reused when it is not ours
 * alone), else a per-run temporary one, with a warning saying why.
 */
export function privateDir(env: NodeJS.ProcessEnv = process.env): { dir: string; cached: boolean } {
  const cache = cacheDirPath(env);
  let why = 'no cache directory (no XDG_CACHE_HOME or HOME)';
  if (cache !== null) {
    try {
      // Nothing is created under a path someone else could redirect: the
      // part that exists is checked first, then the whole path once made.
      const base = realpathSync(existingAncestor(path.dirname(cache)));
      let problem = untrustedPath(base);
      if (problem === null) {
        mkdirSync(cache, { recursive: true, mode: 0o700 });
        // The real path, checked from / down, is what we return: a symlink
        // above it (its owner could repoint it) no longer matters.
        const real = path.join(realpathSync(path.dirname(cache)), path.basename(cache));
        problem = untrustedPath(path.dirname(real));
        if (problem === null) {
          const own = untrusted(lstatSync(real), 'directory');
          if (own === null) return { dir: real, cached: true };
          problem = `${real} ${own}`;
        }
      }
      why = `${cache}: ${problem}`;
    } catch (err) {
      why = `${cache}: ${(err as Error).message}`;
    }
  }
  const dir = tempDirForRun();
  if (!warned.has(why)) {
    warned.add(why);
    process.emitWarning(`not using the cache: ${why}; compiling into ${dir} for this run`, { code: 'NOSHELL_BENCH_CACHE' });
  }
  return { dir, cached: false };
}
