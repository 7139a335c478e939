// The npm tarball as users get it (issue 10): `npm pack` of this tree, with
// the prebuilt addon in it. Shared by the install and package-hygiene suites.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export const PREBUILD_DIR = path.join(ROOT, 'prebuilds', `${process.platform}-${process.arch}`);

export interface PackedFile { path: string; size: number }
export interface Packed { tarball: string; files: PackedFile[]; version: string }

/**
 * prebuilds/ is build output (gitignored; CI makes both before the tests).
 * When one is missing or was built from other native/ sources, build it:
 * scripts/prebuild.mjs works in scratch copies of native/, so the tree the
 * other suites load stays as it is. The arm64 one needs the cross toolchain.
 */
export function ensurePrebuild(): void {
  const check = `import(${JSON.stringify(path.join(ROOT, 'scripts', 'prebuild-targets.mjs'))}).then((m) => console.log(JSON.stringify(m.prebuildProblems())))`;
  const problems = JSON.parse(execFileSync(process.execPath, ['-e', check], { encoding: 'utf8' })) as string[];
  if (problems.length === 0) return;
  execFileSync('npm', ['run', '--silent', 'prebuildify'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  if (!existsSync(PREBUILD_DIR) || readdirSync(PREBUILD_DIR).every((f) => !f.endsWith('.node'))) {
    throw new Error(`no prebuilt addon in ${PREBUILD_DIR} after npm run prebuildify`);
  }
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
