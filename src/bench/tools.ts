// Compiles the benchmark's C programs (reference loop, plugin) on the spot.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');
const cacheDir = path.join(os.tmpdir(), `noshell-bench-${process.getuid?.() ?? 0}`);

/** Builds bench/<name>.c with cc (cached by content hash); returns the binary path. */
export function compile(name: string): string {
  const src = path.join(root, 'bench', `${name}.c`);
  const text = readFileSync(src);
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 12);
  const out = path.join(cacheDir, `${name}-${hash}`);
  if (!existsSync(out)) {
    mkdirSync(cacheDir, { recursive: true });
    execFileSync('cc', ['-O2', '-Wall', '-Wextra', '-o', out, src], { stdio: 'inherit' });
  }
  return out;
}

/** A #!/bin/sh plugin, the other common kind of Nagios check. */
export function shellPlugin(): string {
  mkdirSync(cacheDir, { recursive: true });
  const file = path.join(cacheDir, 'check_shell.sh');
  writeFileSync(file, '#!/bin/sh\necho "OK - shell plugin | time=0.001s;;;0;"\nexit 0\n');
  chmodSync(file, 0o755);
  return file;
}
