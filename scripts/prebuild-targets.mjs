// What the package must ship (issue 18): one prebuilt addon per target, built
// from the native/ sources it ships. Shared by scripts/prebuild.mjs (builds
// them) and scripts/prepack.mjs (refuses to pack without them).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '..');
export const MANIFEST = path.join(ROOT, 'prebuilds', 'manifest.json');

/**
 * arch: Node's name; triplet: the GNU cross toolchain's prefix (Debian's
 * gcc-<triplet> / g++-<triplet> / binutils-<triplet>); machine: e_machine in
 * the ELF header (EM_X86_64, EM_AARCH64).
 */
export const TARGETS = [
  { arch: 'x64', triplet: 'x86_64-linux-gnu', machine: 62 },
  { arch: 'arm64', triplet: 'aarch64-linux-gnu', machine: 183 },
];

export const prebuildPath = (arch) => path.join(ROOT, 'prebuilds', `linux-${arch}`, 'noshell.glibc.node');

/** The addon's sources as the package ships them (native/, without build output). */
export function nativeSources() {
  const dir = path.join(ROOT, 'native');
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(c|cc|h|gyp)$/.test(f) && f.split(path.sep)[0] !== 'build').sort().map((f) => path.join(dir, f));
}

export function nativeSourcesHash() {
  const hash = createHash('sha256');
  const dir = path.join(ROOT, 'native');
  for (const file of nativeSources()) hash.update(`${path.relative(dir, file)}\0`).update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

/** e_machine of an ELF shared object, or null when the file is not one. */
export function elfMachine(file) {
  const head = readFileSync(file).subarray(0, 20);
  if (head.length < 20 || head.readUInt32BE(0) !== 0x7f454c46) return null;
  return head.readUInt16LE(18);
}

/** Why the prebuilds cannot be shipped as they are: [] when they can. */
export function prebuildProblems(targets = TARGETS) {
  const problems = [];
  let manifest = null;
  try {
    manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
  } catch {
    // missing or unreadable: every target counts as not built from these sources
  }
  const sources = nativeSourcesHash();
  for (const t of targets) {
    const file = prebuildPath(t.arch);
    if (!existsSync(file)) {
      problems.push(`${path.relative(ROOT, file)} is missing`);
      continue;
    }
    const machine = elfMachine(file);
    if (machine !== t.machine) problems.push(`${path.relative(ROOT, file)} is not a linux-${t.arch} ELF object (e_machine ${machine})`);
    else if (manifest?.[t.arch]?.sources !== sources) problems.push(`${path.relative(ROOT, file)} was not built from the native/ sources here`);
  }
  return problems;
}
