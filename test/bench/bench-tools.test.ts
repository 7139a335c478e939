import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';

const ROOT = path.resolve(__dirname, '..', '..');
const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
const hash = createHash('sha256').update(readFileSync(path.join(ROOT, 'bench', 'plugin.c'))).digest('hex').slice(0, 12);
const REAL_OUTPUT = /^OK - 3 services running, load 0\.42 \|/;

let tmp: string;
let marker: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-bench-tools-'));
  marker = path.join(tmp, 'PWNED');
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** What another local user would leave there: programs that leave a mark when run. */
function plant(dir: string, owner?: number): void {
  mkdirSync(dir, { recursive: true });
  const evil = `#!/bin/sh\ntouch '${marker}'\necho PWNED\n`;
  for (const name of [`plugin-${hash}`, `reference-${hash}`, 'check_shell.sh']) {
    writeFileSync(path.join(dir, name), evil, { mode: 0o755 });
    if (owner !== undefined) chownSync(path.join(dir, name), owner, owner);
  }
  if (owner !== undefined) chownSync(dir, owner, owner);
}

async function tools() {
  vi.resetModules();
  return import('../../src/bench/spawn/tools');
}

function inside(file: string, dir: string): boolean {
  return realpathSync(file).startsWith(`${realpathSync(dir)}/`);
}

describe('bench tools never run or write through a directory someone else controls', () => {
  it.runIf(isRoot)('the old predictable $TMPDIR/noshell-bench-<uid>, pre-created by another user, is not used', async () => {
    const fakeTmp = path.join(tmp, 'tmpdir');
    const old = path.join(fakeTmp, `noshell-bench-${process.getuid!()}`);
    plant(old, NOBODY);
    chmodSync(fakeTmp, 0o1777);
    vi.stubEnv('TMPDIR', fakeTmp);
    const { compile, shellPlugin } = await tools();
    const env = { XDG_CACHE_HOME: path.join(tmp, 'cache-a') };
    const plugin = compile('plugin', env);
    expect(inside(plugin, old)).toBe(false);
    expect(execFileSync(plugin, { encoding: 'utf8' })).toMatch(REAL_OUTPUT);
    const sh = shellPlugin(env);
    expect(inside(sh, old)).toBe(false);
    expect(execFileSync(sh, { encoding: 'utf8' })).toBe('OK - shell plugin | time=0.001s;;;0;\n');
    expect(existsSync(marker)).toBe(false);
  });

  const hostile: Array<[string, (dir: string) => void, RegExp]> = [
    ['owned by another user', (dir) => plant(dir, NOBODY), /owned by uid 65534/],
    ['ours but mode 0777', (dir) => {
      plant(dir);
      chmodSync(dir, 0o777);
    }, /has mode 0777/],
    ['a symlink to a directory with planted programs', (dir) => {
      plant(`${dir}-target`);
      chmodSync(`${dir}-target`, 0o700);
      symlinkSync(`${dir}-target`, dir);
    }, /is a symbolic link/],
    ['in a parent anyone may write (no sticky bit)', (dir) => {
      mkdirSync(dir, { mode: 0o700 });
      chmodSync(dir, 0o700);
      chmodSync(path.dirname(dir), 0o777);
      plant(dir);
      chmodSync(dir, 0o700);
    }, /has mode 0777: others may write it/],
  ];

  // chown to another user needs root.
  it.each(isRoot ? hostile : hostile.slice(1))('a cache directory %s is refused: a private temp directory is used instead', async (_name, make, why) => {
    const xdg = mkdtempSync(path.join(tmp, 'xdg-'));
    const cache = path.join(xdg, 'noshell');
    make(cache);
    const warnings: string[] = [];
    vi.spyOn(process, 'emitWarning').mockImplementation((w) => void warnings.push(String(w)));
    const { compile, shellPlugin } = await tools();
    const plugin = compile('plugin', { XDG_CACHE_HOME: xdg });
    const sh = shellPlugin({ XDG_CACHE_HOME: xdg });
    // Removed at process exit, which a vitest worker may not reach.
    onTestFinished(() => rmSync(path.dirname(plugin), { recursive: true, force: true }));
    for (const file of [plugin, sh]) {
      expect(inside(file, cache)).toBe(false);
      // The fallback is a mkdtemp directory: ours, 0700.
      const dir = lstatSync(path.dirname(file));
      expect(dir.uid).toBe(process.getuid!());
      expect(dir.mode & 0o777).toBe(0o700);
    }
    expect(execFileSync(plugin, { encoding: 'utf8' })).toMatch(REAL_OUTPUT);
    expect(execFileSync(sh, { encoding: 'utf8' })).toMatch(/^OK - shell plugin/);
    expect(existsSync(marker)).toBe(false);
    expect(warnings.join('\n')).toMatch(why);
    // The planted files were neither run nor overwritten.
    expect(readFileSync(path.join(cache, 'check_shell.sh'), 'utf8')).toContain('PWNED');
  });

  async function privateDirFresh() {
    vi.resetModules();
    return (await import('../../src/bench/spawn/private-dir')).privateDir;
  }

  /** privateDir(env) with its warnings; the fallback directory removed after the test. */
  async function tryCache(env: NodeJS.ProcessEnv): Promise<{ dir: string; cached: boolean; warnings: string }> {
    const warnings: string[] = [];
    vi.spyOn(process, 'emitWarning').mockImplementation((w) => void warnings.push(String(w)));
    const r = (await privateDirFresh())(env);
    if (!r.cached) onTestFinished(() => rmSync(r.dir, { recursive: true, force: true }));
    return { ...r, warnings: warnings.join('\n') };
  }

  // Another user could rename ~/.cache/noshell away and put their own
  // directory (and binaries) in its place while the benchmark runs them.
  it.runIf(isRoot)('HOME under a directory owned by another user: the cache is not used', async () => {
    const rv = mkdtempSync(path.join(tmp, 'rv-'));
    const alice = path.join(rv, 'alice');
    mkdirSync(alice, { mode: 0o755 });
    chownSync(alice, NOBODY, NOBODY);
    const r = await tryCache({ HOME: alice });
    expect(r.cached).toBe(false);
    expect(r.warnings).toMatch(/alice is owned by uid 65534/);
    // Nothing was created in their directory either.
    expect(existsSync(path.join(alice, '.cache'))).toBe(false);
    // The same when ours sits deeper: an ancestor of another user's is enough.
    const deep = path.join(alice, 'sub');
    mkdirSync(deep, { mode: 0o700 });
    const r2 = await tryCache({ XDG_CACHE_HOME: deep });
    expect(r2.cached).toBe(false);
    expect(r2.warnings).toMatch(/alice is owned by uid 65534/);
  });

  it('an ancestor others may write (no sticky bit), however deep, makes the cache untrusted', async () => {
    const top = mkdtempSync(path.join(tmp, 'open-'));
    chmodSync(top, 0o777);
    const xdg = path.join(top, 'a', 'b');
    mkdirSync(xdg, { recursive: true, mode: 0o700 });
    const r = await tryCache({ XDG_CACHE_HOME: xdg });
    expect(r.cached).toBe(false);
    expect(r.warnings).toMatch(/open-\w+ has mode 0777/);
    chmodSync(top, 0o775);
    expect((await tryCache({ XDG_CACHE_HOME: xdg })).cached).toBe(false);
  });

  it('a sticky world-writable ancestor (as /tmp) is fine when our entry in it is ours', async () => {
    const sticky = mkdtempSync(path.join(tmp, 'sticky-'));
    chmodSync(sticky, 0o1777);
    const xdg = path.join(sticky, 'mine');
    mkdirSync(xdg, { mode: 0o700 });
    const r = await tryCache({ XDG_CACHE_HOME: xdg });
    expect(r).toMatchObject({ cached: true, dir: path.join(realpathSync(xdg), 'noshell') });
    if (isRoot) {
      // Someone else's entry in it is not.
      const theirs = path.join(sticky, 'theirs');
      mkdirSync(theirs, { mode: 0o755 });
      chownSync(theirs, NOBODY, NOBODY);
      expect((await tryCache({ XDG_CACHE_HOME: theirs })).cached).toBe(false);
    }
  });

  it('a symlink above the cache is resolved: the real path, checked, is what is used', async () => {
    const real = mkdtempSync(path.join(tmp, 'real-'));
    const link = path.join(tmp, `link-${path.basename(real)}`);
    symlinkSync(real, link);
    const r = await tryCache({ XDG_CACHE_HOME: link });
    expect(r).toMatchObject({ cached: true, dir: path.join(realpathSync(real), 'noshell') });
  });

  it('a fresh cache is created 0700 under XDG_CACHE_HOME and a binary is compiled once', async () => {
    const xdg = path.join(tmp, 'fresh');
    const { compile } = await tools();
    const first = compile('plugin', { XDG_CACHE_HOME: xdg });
    expect(path.dirname(first)).toBe(path.join(xdg, 'noshell'));
    expect(statSync(path.join(xdg, 'noshell')).mode & 0o777).toBe(0o700);
    expect(statSync(first).mode & 0o777).toBe(0o755);
    const ino = statSync(first).ino;
    expect(compile('plugin', { XDG_CACHE_HOME: xdg })).toBe(first);
    expect(statSync(first).ino).toBe(ino);
    // A cached binary others could have written is not trusted: rebuilt by rename.
    chmodSync(first, 0o777);
    expect(compile('plugin', { XDG_CACHE_HOME: xdg })).toBe(first);
    expect(statSync(first).ino).not.toBe(ino);
    expect(statSync(first).mode & 0o777).toBe(0o755);
    expect(execFileSync(first, { encoding: 'utf8' })).toMatch(REAL_OUTPUT);
  });

  it('the shell plugin is never written through a symlink planted in its place', async () => {
    const xdg = path.join(tmp, 'symlinked-file');
    const cache = path.join(xdg, 'noshell');
    mkdirSync(cache, { recursive: true, mode: 0o700 });
    const victim = path.join(tmp, 'victim');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, path.join(cache, 'check_shell.sh'));
    const { shellPlugin } = await tools();
    const sh = shellPlugin({ XDG_CACHE_HOME: xdg });
    expect(sh).toBe(path.join(cache, 'check_shell.sh'));
    expect(lstatSync(sh).isSymbolicLink()).toBe(false);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(execFileSync(sh, { encoding: 'utf8' })).toMatch(/^OK - shell plugin/);
  });

  it('the per-run temp directory is removed when the process exits', () => {
    const xdg = mkdtempSync(path.join(tmp, 'xdg-exit-'));
    chmodSync(xdg, 0o700);
    mkdirSync(path.join(xdg, 'noshell'), { mode: 0o777 });
    chmodSync(path.join(xdg, 'noshell'), 0o777);
    const script = `const { compile } = require(${JSON.stringify(path.join(ROOT, 'dist', 'bench', 'spawn', 'tools.js'))});
      process.stdout.write(compile('plugin', { XDG_CACHE_HOME: ${JSON.stringify(xdg)} }));`;
    const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    expect(path.basename(path.dirname(out))).toMatch(/^noshell-bench-/);
    expect(existsSync(path.dirname(out))).toBe(false);
  });
});
