// Running the built package as another user (nobody): a world-readable copy
// of what it needs, since the checkout itself may sit in a 0700 directory.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
export const NOBODY = 65534;
export const isRoot = process.getuid?.() === 0;

let copy: string | undefined;

/** The package's runtime dependencies and theirs (npm's flat layout). */
function runtimeDeps(): string[] {
  const seen = new Set<string>();
  const visit = (dir: string) => {
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    for (const dep of Object.keys(pkg.dependencies ?? {})) {
      if (seen.has(dep)) continue;
      seen.add(dep);
      visit(path.join(root, 'node_modules', dep));
    }
  };
  visit(root);
  return [...seen];
}

/** A 0755 copy of dist/, the addon and node-gyp-build; returns its index.js. */
export function unprivilegedPackage(): string {
  if (copy === undefined) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-nobody-'));
    cpSync(path.join(root, 'dist'), path.join(dir, 'dist'), { recursive: true });
    // Whichever binaries the loader would find: a local build, and the
    // prebuilds.
    for (const sub of [path.join('native', 'build', 'Release'), 'prebuilds']) {
      if (existsSync(path.join(root, sub))) cpSync(path.join(root, sub), path.join(dir, sub), { recursive: true });
    }
    for (const dep of runtimeDeps()) {
      cpSync(path.join(root, 'node_modules', dep), path.join(dir, 'node_modules', dep), { recursive: true });
    }
    cpSync(path.join(root, 'package.json'), path.join(dir, 'package.json'));
    execFileSync('chmod', ['-R', 'a+rX', dir]);
    chmodSync(dir, 0o755);
    copy = dir;
  }
  return path.join(copy, 'dist', 'index.js');
}

/**
 * The copy plus test/fault and the built fixtures, at the same relative
 * places: the fault scenarios run as nobody from there. Returns its root.
 */
export function unprivilegedTree(): string {
  const dir = path.dirname(path.dirname(unprivilegedPackage()));
  for (const sub of [path.join('test', 'fault'), path.join('test', 'fixtures', 'bin')]) {
    cpSync(path.join(root, sub), path.join(dir, sub), { recursive: true });
  }
  execFileSync('chmod', ['-R', 'a+rX', dir]);
  return dir;
}

/** Removes the copy (call from afterAll: vitest's workers end without 'exit'). */
export function removeUnprivilegedCopy(): void {
  if (copy !== undefined) rmSync(copy, { recursive: true, force: true });
  copy = undefined;
}

/** Writes a CommonJS script next to the copy (readable by nobody); returns its path. */
export function unprivilegedScript(name: string, body: string): string {
  const entry = unprivilegedPackage();
  const file = path.join(path.dirname(path.dirname(entry)), name);
  writeFileSync(file, `const noshell = require(${JSON.stringify(entry)});\n${body}`, { mode: 0o644 });
  return file;
}

/** argv prefix that runs a command as nobody with no supplementary groups. */
export const asNobody = ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'];
