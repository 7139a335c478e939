// Builds the prebuilt addons the package ships, with prebuildify (N-API: one
// binary per platform-arch for every Node):
//   prebuilds/linux-x64/noshell.glibc.node
//   prebuilds/linux-arm64/noshell.glibc.node  (cross-compiled with Debian's
//     gcc-aarch64-linux-gnu / g++-aarch64-linux-gnu / binutils-aarch64-linux-gnu)
// and records the hash of the native/ sources each was built from in
// prebuilds/manifest.json (scripts/prepack.mjs checks it).
// usage: node scripts/prebuild.mjs [x64] [arm64]        (default: every target)
// Each build runs in a scratch copy of native/, so the checkout's own build
// (native/build, what the tests load) is left as it is.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MANIFEST, ROOT, TARGETS, elfMachine, nativeSources, nativeSourcesHash, prebuildPath } from './prebuild-targets.mjs';

const HOST = process.arch;

function onPath(name) {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(path.join(dir, name)));
}

/** node-gyp's script: the one npm runs (npm run sets npm_config_node_gyp), else npm's own beside node. */
function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  const found = candidates.find((p) => p && existsSync(p));
  if (found === undefined) throw new Error('prebuild: node-gyp not found (run it with npm run prebuildify)');
  return found;
}

/** The environment for one target: the cross tools when it is not the host's arch. */
function toolchain(target) {
  const env = { ...process.env, NODE_PATH: path.join(ROOT, 'node_modules') };
  // Node's headers beside this node (Debian's nodejs-dev, or a tarball's include/): no download.
  const prefix = path.join(path.dirname(process.execPath), '..');
  if (!env.npm_config_nodedir && existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) env.npm_config_nodedir = prefix;
  if (target.arch === HOST) return { env, strip: 'strip' };
  const tool = (name) => `${target.triplet}-${name}`;
  const missing = ['gcc', 'g++', 'strip'].map(tool).filter((t) => !onPath(t));
  if (missing.length > 0) {
    throw new Error(`prebuild: linux-${target.arch} needs the cross toolchain: ${missing.join(', ')} not on PATH ` +
      `(Debian: apt-get install gcc-${target.triplet} g++-${target.triplet} binutils-${target.triplet})`);
  }
  Object.assign(env, { CC: tool('gcc'), CXX: tool('g++'), LINK: tool('g++'), AR: tool('ar'),
    CC_host: 'cc', CXX_host: 'c++', LINK_host: 'c++' });
  return { env, strip: tool('strip') };
}

function build(target) {
  const { env, strip } = toolchain(target);
  const scratch = mkdtempSync(path.join(os.tmpdir(), `noshell-prebuild-${target.arch}-`));
  try {
    for (const file of nativeSources()) {
      const to = path.join(scratch, path.relative(path.join(ROOT, 'native'), file));
      mkdirSync(path.dirname(to), { recursive: true });
      cpSync(file, to);
    }
    const args = [path.join(ROOT, 'node_modules', 'prebuildify', 'bin.js'), '--napi', '--strip', '--tag-libc',
      '--name', 'noshell', '--arch', target.arch, '--platform', 'linux', '--strip-bin', strip,
      '--node-gyp', nodeGyp(), '--out', ROOT, '--cwd', scratch];
    const r = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) throw new Error(`prebuild: prebuildify for linux-${target.arch} failed (exit ${r.status ?? r.signal})`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const file = prebuildPath(target.arch);
  const machine = existsSync(file) ? elfMachine(file) : null;
  if (machine !== target.machine) throw new Error(`prebuild: ${file} is not a linux-${target.arch} binary (e_machine ${machine})`);
}

const wanted = process.argv.slice(2);
for (const a of wanted) {
  if (!TARGETS.some((t) => t.arch === a)) {
    console.error(`usage: node scripts/prebuild.mjs [${TARGETS.map((t) => t.arch).join('] [')}]`);
    process.exit(2);
  }
}
const targets = wanted.length === 0 ? TARGETS : TARGETS.filter((t) => wanted.includes(t.arch));
let manifest = {};
try {
  manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
} catch {
  // a first build
}
const sources = nativeSourcesHash();
try {
  for (const target of targets) {
    build(target);
    manifest[target.arch] = { sources, file: path.relative(ROOT, prebuildPath(target.arch)) };
    writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
    console.error(`prebuild: ${path.relative(ROOT, prebuildPath(target.arch))}`);
  }
} catch (e) {
  console.error(e.message);
  process.exit(1);
}
