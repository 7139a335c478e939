// `noshell build-addon`: builds the native addon from the sources the package
// ships (native/) with the user's toolchain, where no prebuilt binary fits
// (musl, another architecture, an older glibc). Nothing is built at install
// time (issue 18: no install scripts); this is the one explicit step, and the
// load error names it. It must not load the addon itself: it runs before one
// exists.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { localBuildPath } from '../binding/load-error';
import { quoteArg } from '../command/shell-option';
import { untrustedFile } from '../util/fs-trust';

export const buildAddonUsage = 'noshell build-addon [-- NODE-GYP-ARGS...]';

type Write = (s: string) => void;

/** The package root: dist/cli/ is two levels below it. */
const ROOT = path.join(__dirname, '..', '..');

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * `name` on PATH. Only absolute PATH entries: an empty or relative one ("", ".",
 * "bin") is the working directory or below it, which may be anyone's (a /tmp).
 */
function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  if (name.includes('/')) return executable(name) ? name : undefined;
  for (const dir of (env.PATH ?? '').split(':')) {
    if (!path.isAbsolute(dir)) continue;
    const file = path.join(dir, name);
    if (executable(file)) return file;
  }
  return undefined;
}

/** node-gyp as a command, or why none was taken. */
export interface NodeGypChoice {
  /** `[command, ...args]`, or undefined when none was found or none could be trusted. */
  command: string[] | undefined;
  /** A line for each copy passed over: it lies where others could have put or changed it. */
  refused: string[];
}

/**
 * node-gyp as `[command, ...args]`: the one npm names (npm_config_node_gyp, set
 * by npm exec/npx), npm's own copy beside the running node, the package's own
 * dependency, then one on PATH. Never one found from the working directory
 * (run as root in /tmp, /tmp/node_modules/node-gyp is whatever another user
 * put there), and none whose file or any directory above it someone other
 * than us or root may change (fs-trust.ts): a package installed under a
 * shared directory resolves through that directory's node_modules too.
 */
export function findNodeGyp(env: NodeJS.ProcessEnv): NodeGypChoice {
  const scripts = [
    env.npm_config_node_gyp,
    // npm ships node-gyp; npx/npm exec set npm_config_node_gyp, a plain shell does not.
    path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  try {
    scripts.push(require.resolve('node-gyp/bin/node-gyp.js', { paths: [ROOT] }));
  } catch {
    // not a dependency here
  }
  const refused: string[] = [];
  const trusted = (file: string): boolean => {
    let why: string | null;
    try {
      // untrustedFile leaves an entry that is not a regular file to us: a FIFO in a sticky
      // directory, say, whose writer feeds node whatever it likes. A regular file in a
      // trusted directory stays what it is: only us or root could replace it.
      why = untrustedFile(file);
      if (why === null && !statSync(file).isFile()) why = 'not a regular file';
    } catch (e) {
      why = (e as Error).message;
    }
    if (why !== null) refused.push(`${file}: ${why}`);
    return why === null;
  };
  for (const candidate of scripts) {
    if (candidate === undefined || candidate === '' || !path.isAbsolute(candidate)) continue;
    // The path that is checked is the path that is run (`a/../b` taken as the kernel takes it).
    const script = path.normalize(candidate);
    if (!existsSync(script)) continue;
    if (trusted(script)) return { command: [process.execPath, script], refused };
  }
  const bin = onPath('node-gyp', env);
  if (bin !== undefined && trusted(bin)) return { command: [bin], refused };
  return { command: undefined, refused };
}

/** What node-gyp needs that is not there, each with what provides it. */
export function missingTools(env: NodeJS.ProcessEnv): string[] {
  const missing: string[] = [];
  const first = (names: Array<string | undefined>) => names.some((n) => n !== undefined && n !== '' && onPath(n, env) !== undefined);
  if (!first([env.CC, 'cc', 'gcc', 'clang'])) missing.push('a C compiler (cc)');
  if (!first([env.CXX, 'c++', 'g++', 'clang++'])) missing.push('a C++ compiler (c++)');
  if (!first(['make'])) missing.push('make');
  if (!first([env.npm_config_python, env.PYTHON, 'python3'])) missing.push('python3');
  return missing;
}

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Node's headers beside the running node (official tarballs have include/node,
 * Debian's nodejs-dev /usr/include/node): node-gyp then needs no download.
 * An explicit nodedir (npm config, --nodedir) wins.
 */
function gypEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  // No empty or relative PATH entry for what node-gyp starts (node, python3, make, cc):
  // those are the working directory, which may be anyone's.
  const out: NodeJS.ProcessEnv = { ...env, PATH: (env.PATH ?? '').split(':').filter((d) => path.isAbsolute(d)).join(':') };
  const prefix = path.join(path.dirname(process.execPath), '..');
  if (env.npm_config_nodedir !== undefined && env.npm_config_nodedir !== '') return out;
  if (!existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) return out;
  out.npm_config_nodedir = path.resolve(prefix);
  return out;
}

/**
 * Why node-addon-api, as native/binding.gyp will find it (`require` from
 * native/, walking up through every parent's node_modules), may not be
 * used, or null. A layout without its own copy would take one from a shared
 * directory above the package (/tmp/node_modules), run as whoever builds.
 * The walk's earlier stops are inside the package, which is checked too, so
 * what is found here is what gyp finds.
 */
export function untrustedAddonApi(native: string): string | null {
  let found: string;
  try {
    found = require.resolve('node-addon-api', { paths: [native] });
  } catch {
    return 'node-addon-api not found from the package (npm installs it with the package: run npm install)';
  }
  try {
    const why = untrustedFile(found);
    return why === null ? null : `${found}: ${why}`;
  } catch (e) {
    return `${found}: ${(e as Error).message}`;
  }
}

export function buildAddonCommand(args: string[], out: Write, err: Write, env: NodeJS.ProcessEnv = process.env): number {
  if (args.length > 0 && args[0] !== '--') {
    err(`noshell build-addon: unknown argument ${JSON.stringify(args[0])}\nusage: ${buildAddonUsage}\n`);
    return 2;
  }
  const extra = args.slice(1);
  const native = path.join(ROOT, 'native');
  if (!existsSync(path.join(native, 'binding.gyp'))) {
    err(`noshell build-addon: no addon sources in ${native} (this copy of the package does not ship native/)\n`);
    return 1;
  }
  if (!writable(native)) {
    err(`noshell build-addon: cannot write to ${native}: run it as the user who installed the package ` +
      '(for a global install, the one who ran npm install -g)\n');
    return 1;
  }
  const missing = missingTools(env);
  if (missing.length > 0) {
    err(`noshell build-addon: building the addon needs ${missing.join(', ')}, not found on PATH.\n` +
      'Debian/Ubuntu: apt-get install build-essential python3; Fedora/RHEL: dnf install gcc-c++ make python3; ' +
      'Alpine: apk add build-base python3\n');
    return 1;
  }
  const addonApi = untrustedAddonApi(native);
  if (addonApi !== null) {
    err(`noshell build-addon: not building with ${addonApi}\n`);
    return 1;
  }
  const { command: gyp, refused } = findNodeGyp(env);
  for (const line of refused) err(`noshell build-addon: not running ${line}\n`);
  if (gyp === undefined) {
    err('noshell build-addon: node-gyp not found (npm ships it; otherwise: npm install -g node-gyp)\n');
    return 1;
  }
  const argv = [...gyp, 'rebuild', '--directory', native, ...extra];
  out(`noshell build-addon: building ${localBuildPath(ROOT)}: ${argv.map(quoteArg).join(' ')}\n`);
  const built = spawnSync(argv[0], argv.slice(1), {
    env: gypEnv(env), stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (built.error !== undefined || built.status !== 0) {
    const why = built.error?.message ?? (built.signal !== null ? `killed by ${built.signal}` : `exit ${built.status}`);
    err(`noshell build-addon: node-gyp failed (${why}); its output is above\n`);
    return 1;
  }
  // Load it in a fresh process, through the package as a user would, and run a child.
  const probe = spawnSync(process.execPath, ['-e', `
    require(${JSON.stringify(path.join(ROOT, 'dist', 'index.js'))})
      .execFile(process.execPath, ['-e', 'process.stdout.write("ok")'])
      .then((r) => { if (r.stdout !== 'ok') throw new Error('unexpected output ' + JSON.stringify(r.stdout)); })
      .catch((e) => { console.error(e.message); process.exitCode = 1; });`], { env, encoding: 'utf8' });
  if (probe.status !== 0) {
    err(`noshell build-addon: the addon was built but does not work: ${(probe.stderr || probe.error?.message || '').trim()}\n`);
    return 1;
  }
  out(`noshell build-addon: done; popen-noshell loads ${localBuildPath(ROOT)} (before any prebuilt binary)\n`);
  return 0;
}
