// The npm tarball as users get it (issue 10): `npm pack` of this tree, with
// the prebuilt addon in it. Shared by the install and package-hygiene suites.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..');
export const PREBUILD_DIR = path.join(ROOT, 'prebuilds', `${process.platform}-${process.arch}`);

export interface PackedFile { path: string; size: number }
export interface Packed { tarball: string; files: PackedFile[]; version: string }

function prebuilt(): string[] {
  return existsSync(PREBUILD_DIR) ? readdirSync(PREBUILD_DIR).filter((f) => f.endsWith('.node')) : [];
}

/**
 * prebuilds/ is build output (gitignored; CI makes it before the tests). When
 * it is missing, build it in a copy of the tree: node-gyp in this tree would
 * replace build/Release under the other suites' feet.
 */
export function ensurePrebuild(): void {
  if (prebuilt().length > 0) return;
  const copy = mkdtempSync(path.join(os.tmpdir(), 'noshell-prebuild-'));
  try {
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
    for (const f of tracked) if (existsSync(path.join(ROOT, f))) cpSync(path.join(ROOT, f), path.join(copy, f), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
    // npm run puts its bundled node-gyp on PATH, which prebuildify calls.
    execFileSync('npm', ['run', '--silent', 'prebuildify'], { cwd: copy, stdio: ['ignore', 'ignore', 'inherit'] });
    cpSync(path.join(copy, 'prebuilds'), path.join(ROOT, 'prebuilds'), { recursive: true });
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
  if (prebuilt().length === 0) throw new Error(`no prebuilt addon in ${PREBUILD_DIR} after npm run prebuildify`);
}

/**
 * Packs into `dest`. --ignore-scripts: the suite's global setup has just
 * built dist/ (prepare would rebuild it while other suites read it).
 */
export function pack(dest: string): Packed {
  ensurePrebuild();
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dest], {
    cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [info] = JSON.parse(out) as Array<{ filename: string; version: string; files: PackedFile[] }>;
  return { tarball: path.join(dest, info.filename), files: info.files, version: info.version };
}
