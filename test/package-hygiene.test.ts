// Issue 10: what npm publishes. The packed tarball holds what users need and
// nothing else, passes publint and arethetypeswrong, and its types compile in
// strict TypeScript projects (module node16, moduleResolution bundler).
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack, ROOT, type Packed } from './packed-tarball';

const BIN = path.join(ROOT, 'node_modules', '.bin');

let tmp: string;
let packed: Packed;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-hygiene-'));
  packed = pack(tmp);
}, 600_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function run(cmd: string, args: string[], cwd = tmp) {
  return spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 120_000 });
}

describe('the npm tarball', () => {
  it('holds dist, types, the prebuild, native sources, binding.gyp, bench C sources and the docs', () => {
    const files = packed.files.map((f) => f.path);
    for (const needed of [
      'package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'binding.gyp', 'bench/reference.c', 'bench/plugin.c',
      'dist/index.js', 'dist/index.mjs', 'dist/index.d.ts', 'dist/index.d.mts', 'dist/cli.js',
      'prebuilds/linux-x64/noshell.glibc.node', 'native/spawn.c', 'native/spawn.h', 'native/addon.cc',
    ]) expect(files, needed).toContain(needed);
  });

  it('holds nothing else: no tests, fixtures, sources maps, build dirs or bench results', () => {
    const allowed = /^(package\.json|README\.md|LICENSE|CHANGELOG\.md|binding\.gyp|bench\/[\w-]+\.c|native\/[\w-]+\.(c|cc|h)|prebuilds\/linux-x64\/[\w.-]+\.node|dist\/[\w/.-]+\.(js|mjs|d\.ts|d\.mts))$/;
    const stray = packed.files.map((f) => f.path).filter((f) => !allowed.test(f));
    expect(stray).toEqual([]);
    expect(packed.files.some((f) => f.path.startsWith('dist/'))).toBe(true);
  });

  it('publint --strict finds nothing', () => {
    const r = run(path.join(BIN, 'publint'), ['--strict', packed.tarball]);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/Suggestions|Warnings|Errors/);
  });

  it('arethetypeswrong: no problems; ESM consumers get the .d.mts, CJS consumers the .d.ts', () => {
    const r = run(path.join(BIN, 'attw'), [packed.tarball, '--format', 'json']);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.problems).toEqual({});
    const resolved = (kind: string) => report.analysis.entrypoints['.'].resolutions[kind].resolution.fileName;
    expect(resolved('node16-esm')).toBe('/node_modules/popen-noshell/dist/index.d.mts');
    expect(resolved('node16-cjs')).toBe('/node_modules/popen-noshell/dist/index.d.ts');
    expect(resolved('bundler')).toBe('/node_modules/popen-noshell/dist/index.d.mts');
  });

  it('what the CLI needs at run time is a dependency (tinybench for bench), not a devDependency', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(Object.keys(pkg.dependencies)).toEqual(expect.arrayContaining(['node-gyp-build', 'node-addon-api', 'tinybench']));
    expect(Object.keys(pkg.devDependencies)).not.toContain('tinybench');
    // The fallback build from source stays: a platform without a prebuild compiles.
    expect(pkg.scripts.install).toBe('node-gyp-build');
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(path.join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} noshell contributors\n/);
  });
});

describe('a strict TypeScript consumer compiles every public API against the packed types', () => {
  let consumer: string;
  beforeAll(() => {
    consumer = path.join(tmp, 'consumer');
    cpSync(path.join(ROOT, 'test', 'consumer'), consumer, { recursive: true });
    const r = run('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', packed.tarball], consumer);
    expect(r.status, r.stderr).toBe(0);
    // Node's types come from this repository: the consumer must not need the network.
    mkdirSync(path.join(consumer, 'node_modules', '@types'), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules', '@types', 'node'), path.join(consumer, 'node_modules', '@types', 'node'));
  }, 300_000);

  // The example has @ts-expect-error lines: types that resolved to `any` fail too.
  for (const config of ['node16', 'bundler']) {
    it(`tsconfig.${config}.json`, () => {
      const r = run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', `tsconfig.${config}.json`], consumer);
      expect(r.stdout + r.stderr).toBe('');
      expect(r.status).toBe(0);
    }, 240_000);
  }
});
