// Running the built package as another user (nobody): a world-readable copy
// of what it needs, since the checkout itself may sit in a 0700 directory.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
export const NOBODY = 65534;
export const isRoot = process.getuid?.() === 0;

let copy: string | undefined;

/** A 0755 copy of dist/, the addon and node-gyp-build; returns its index.js. */
export function unprivilegedPackage(): string {
  if (copy === undefined) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-nobody-'));
    cpSync(path.join(root, 'dist'), path.join(dir, 'dist'), { recursive: true });
    mkdirSync(path.join(dir, 'build', 'Release'), { recursive: true });
    cpSync(path.join(root, 'build', 'Release', 'noshell.node'), path.join(dir, 'build', 'Release', 'noshell.node'));
    cpSync(path.join(root, 'node_modules', 'node-gyp-build'), path.join(dir, 'node_modules', 'node-gyp-build'), { recursive: true });
    cpSync(path.join(root, 'package.json'), path.join(dir, 'package.json'));
    execFileSync('chmod', ['-R', 'a+rX', dir]);
    chmodSync(dir, 0o755);
    copy = dir;
  }
  return path.join(copy, 'dist', 'index.js');
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
