// Issue 10: the packed tarball installs and loads where there is no compiler.
// npm with and without install scripts, pnpm and bun with their defaults (no
// dependency scripts), all under a PATH holding only node, npm and sh; then
// the library, `noshell check`, `--version` and `bench` run from there.
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack, type Packed } from './packed-tarball';

const CHECK_DUMMY = '/usr/lib/nagios/plugins/check_dummy';
const PNPM = 'pnpm@10.34.8';
const BUN = 'bun@1.4.5';

let tmp: string;
let packed: Packed;
/**
 * A bin directory with node, npm, sh and the few coreutils package-manager
 * shims use (pnpm's .bin scripts call sed, dirname, uname): a server without
 * a toolchain.
 */
let bare: string;

function which(name: string): string {
  return realpathSync(execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim());
}

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-install-'));
  packed = pack(tmp);
  bare = path.join(tmp, 'bare-bin');
  mkdirSync(bare);
  symlinkSync(process.execPath, path.join(bare, 'node'));
  symlinkSync(which('npm'), path.join(bare, 'npm'));
  for (const tool of ['sh', 'sed', 'dirname', 'basename', 'uname', 'cat', 'env']) symlinkSync(which(tool), path.join(bare, tool));
}, 600_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const bareEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ ...process.env, PATH: bare, ...extra });

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = bareEnv()): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: 240_000 });
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
function expectWorksWithoutToolchain(dir: string): void {
  const pkg = path.join(dir, 'node_modules', 'popen-noshell');
  // Nothing was compiled: node-gyp would have left build/ behind.
  expect(existsSync(path.join(pkg, 'build'))).toBe(false);
  writeFileSync(path.join(dir, 'probe.cjs'), PROBE);
  const probe = run('node', ['probe.cjs'], dir);
  expect(probe.status, probe.stderr).toBe(0);
  const result = JSON.parse(probe.stdout);
  expect(result).toMatchObject({ echo: 'hi\n', state: 'OK', output: 'OK: ok', sameExec: true });
  const prebuild = realpathSync(path.join(pkg, 'prebuilds', 'linux-x64', 'noshell.glibc.node'));
  expect(result.addons).toEqual([prebuild]);

  const cli = path.join(dir, 'node_modules', '.bin', 'noshell');
  const check = run(cli, ['check', '--', CHECK_DUMMY, '0', 'ok'], dir);
  expect(check.status, check.stderr).toBe(0);
  expect(check.stdout).toBe('OK: ok\n');
  const version = run(cli, ['--version'], dir);
  expect(version.status, version.stderr).toBe(0);
  expect(version.stdout).toBe(`${packed.version}\n`);
}

describe('the packed tarball on a machine without a C/C++ toolchain', () => {
  it('the stripped PATH really has no compiler, make or python3', () => {
    for (const tool of ['cc', 'gcc', 'c++', 'make', 'python3']) {
      expect(run(tool, ['--version'], tmp).error, tool).toMatchObject({ code: 'ENOENT' });
    }
    expect(run('node', ['--version'], tmp).stdout).toBe(`${process.version}\n`);
  });

  it('npm install --ignore-scripts: the prebuilt addon loads', () => {
    const dir = project('npm-ignore-scripts');
    const r = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', packed.tarball], dir);
    expect(r.status, r.stderr).toBe(0);
    expectWorksWithoutToolchain(dir);
  }, 300_000);

  it('npm install with scripts: node-gyp-build finds the prebuild and compiles nothing', () => {
    const dir = project('npm-scripts');
    // Were the prebuild unusable, the install script would run node-gyp,
    // which fails here without python3, make and cc.
    const r = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--foreground-scripts', packed.tarball], dir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toMatch(/> popen-noshell@[\d.]+ install\n> node-gyp-build\n/); // the script did run
    expectWorksWithoutToolchain(dir);
  }, 300_000);

  it(`pnpm (${PNPM}) with its defaults: dependency scripts are not run, the addon still loads`, () => {
    const tool = path.join(tmp, 'pnpm-cli');
    execFileSync('npm', ['install', '--prefix', tool, '--no-audit', '--no-fund', PNPM], { stdio: 'ignore' });
    const dir = project('pnpm');
    const r = run('node', [path.join(tool, 'node_modules', 'pnpm', 'bin', 'pnpm.cjs'), 'add', packed.tarball,
      '--store-dir', path.join(tmp, 'pnpm-store')], dir);
    expect(r.status, r.stderr + r.stdout).toBe(0);
    // pnpm 10 says it skipped popen-noshell's install script: this is the default path.
    expect(r.stdout).toMatch(/Ignored build scripts:[\s\S]*popen-noshell/);
    expectWorksWithoutToolchain(dir);
  }, 300_000);

  it(`bun (${BUN}) with its defaults: the untrusted install script is blocked, the addon still loads`, () => {
    const tool = path.join(tmp, 'bun-cli');
    execFileSync('npm', ['install', '--prefix', tool, '--no-audit', '--no-fund', BUN], { stdio: 'ignore' });
    const dir = project('bun');
    const r = run(path.join(tool, 'node_modules', '.bin', 'bun'), ['add', packed.tarball], dir,
      bareEnv({ BUN_INSTALL_CACHE_DIR: path.join(tmp, 'bun-cache') }));
    expect(r.status, r.stderr + r.stdout).toBe(0);
    expect(r.stdout + r.stderr).toMatch(/Blocked 1 postinstall/);
    expectWorksWithoutToolchain(dir);
  }, 300_000);

  it('noshell bench from the installed package: no C reference without cc, results in the cwd', () => {
    const dir = project('bench');
    const r = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', packed.tarball], dir);
    expect(r.status, r.stderr).toBe(0);
    // An empty cache: no C program compiled by an earlier run can stand in.
    const bench = run(path.join(dir, 'node_modules', '.bin', 'noshell'), ['bench', '--quick', '--seconds', '0.05'], dir,
      bareEnv({ XDG_CACHE_HOME: path.join(tmp, 'empty-cache') }));
    expect(bench.status, bench.stderr).toBe(0);
    const out = path.join(dir, 'noshell-bench-results');
    expect(bench.stdout).toContain('note: no C compiler (cc) found');
    expect(bench.stdout).toContain(`results will be written to ${out}`);
    expect(bench.stdout).not.toContain('| C reference |');
    expect(bench.stdout).not.toContain(' % of C |'); // the column, not the note naming it
    expect(bench.stdout).toContain('| noshell.execFile |');
    const json = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8'));
    const drivers = new Set(json.results.map((m: { driver: string }) => m.driver));
    expect(drivers).toContain('cp.exec');
    expect(drivers).not.toContain('C reference');
    expect(json.results.map((m: { workload: string }) => m.workload)).not.toContain('plugin');
    expect(existsSync(path.join(dir, 'node_modules', 'popen-noshell', 'bench', 'results'))).toBe(false);
  }, 300_000);
});
