// Compiles the benchmark's C programs (reference loop, plugin) on the spot,
// into a directory only this user can write (see private-dir.ts).
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { privateDir, untrusted } from './private-dir';

const root = path.resolve(__dirname, '..', '..', '..');

/** A file of ours, usable as is: a regular file we own that no one else may write. */
function usable(file: string): boolean {
  try {
    return untrusted(lstatSync(file), 'file') === null;
  } catch {
    return false;
  }
}

/** A name no one else can have made: the final one appears only by rename. */
function tempName(file: string): string {
  return `${file}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
}

/** Builds bench/<name>.c with cc (cached by content hash); returns the binary path. */
export function compile(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const src = path.join(root, 'bench', `${name}.c`);
  const text = readFileSync(src);
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 12);
  const out = path.join(privateDir(env).dir, `${name}-${hash}`);
  if (usable(out)) return out;
  const tmp = tempName(out);
  try {
    execFileSync('cc', ['-O2', '-Wall', '-Wextra', '-o', tmp, src], { stdio: 'inherit' });
    // Whatever the umask: a binary others may write would not be reused.
    chmodSync(tmp, 0o755);
    // Atomic: a concurrent run sees the old binary or the new one, never half.
    renameSync(tmp, out);
  } finally {
    rmSync(tmp, { force: true });
  }
  return out;
}

/**
 * compile(), or null when there is no `cc` to run: an installed package on a
 * server without a toolchain still benchmarks everything but the C programs.
 * A compiler that fails on our source is still an error.
 */
export function compileIfPossible(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  try {
    return compile(name, env);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && (err as { path?: string }).path === 'cc') return null;
    throw err;
  }
}

const SHELL_PLUGIN = '#!/bin/sh\necho "OK - shell plugin | time=0.001s;;;0;"\nexit 0\n';

/** A #!/bin/sh plugin, the other common kind of Nagios check. */
export function shellPlugin(env: NodeJS.ProcessEnv = process.env): string {
  const file = path.join(privateDir(env).dir, 'check_shell.sh');
  if (usable(file) && readFileSync(file, 'utf8') === SHELL_PLUGIN) return file;
  const tmp = tempName(file);
  try {
    // 'wx': O_CREAT|O_EXCL, so never through a symlink or into someone's file.
    writeFileSync(tmp, SHELL_PLUGIN, { flag: 'wx', mode: 0o755 });
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
  return file;
}
