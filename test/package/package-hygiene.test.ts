// Issue 10: what npm publishes. The packed tarball holds what users need and
// nothing else, passes publint and arethetypeswrong, and its types compile in
// strict TypeScript projects (module node16, moduleResolution bundler).
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
  it('holds dist, types, both prebuilds, native sources with their binding.gyp, bench C sources and the docs', () => {
    const files = packed.files.map((f) => f.path);
    for (const needed of [
      'package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'bench/reference.c', 'bench/plugin.c', 'bench/runtime-loop.mjs',
      'dist/index.js', 'dist/index.mjs', 'dist/index.d.ts', 'dist/index.d.mts', 'dist/cli.js', 'dist/cli/build-addon.js',
      'prebuilds/linux-x64/noshell.glibc.node', 'prebuilds/linux-arm64/noshell.glibc.node', 'prebuilds/manifest.json',
      'native/binding.gyp', 'native/core/spawn.c', 'native/core/spawn.h', 'native/napi/addon.cc',
    ]) expect(files, needed).toContain(needed);
  });

  // npm and pnpm run `node-gyp rebuild` for a package with a binding.gyp at its
  // root and no install script; pnpm 12 and npm 12 refuse or block install
  // scripts by default (issue 18). Nothing may run at install time.
  it('runs nothing at install time: no install/preinstall/postinstall script, no binding.gyp at the root, no gypfile', () => {
    const files = packed.files.map((f) => f.path);
    expect(files).not.toContain('binding.gyp');
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    for (const script of ['preinstall', 'install', 'postinstall']) expect(pkg.scripts[script], script).toBeUndefined();
    expect(pkg.gypfile).toBeUndefined();
    // The package.json inside the tarball is the one users get.
    const inside = JSON.parse(spawnSync('tar', ['-xOzf', packed.tarball, 'package/package.json'], { encoding: 'utf8' }).stdout);
    expect(Object.keys(inside.scripts ?? {}).filter((s) => /install/.test(s))).toEqual([]);
    expect(inside.gypfile).toBeUndefined();
  });

  it('ships each prebuild for its own machine, built from the native/ sources it ships', () => {
    const manifest = JSON.parse(spawnSync('tar', ['-xOzf', packed.tarball, 'package/prebuilds/manifest.json'], { encoding: 'utf8' }).stdout);
    const machine = (arch: string) => spawnSync('tar', ['-xOzf', packed.tarball, `package/prebuilds/linux-${arch}/noshell.glibc.node`], { encoding: 'buffer', maxBuffer: 16 << 20 }).stdout.readUInt16LE(18);
    expect(machine('x64')).toBe(62); // EM_X86_64
    expect(machine('arm64')).toBe(183); // EM_AARCH64
    expect(manifest.x64.sources).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.arm64.sources).toBe(manifest.x64.sources);
  });

  it('holds nothing else: no tests, fixtures, sources maps, build dirs or bench results', () => {
    const allowed = /^(package\.json|README\.md|LICENSE|CHANGELOG\.md|bench\/[\w-]+\.c|bench\/runtime-loop\.mjs|native\/(core|executor|napi|metrics)\/[\w-]+\.(c|cc|h)|native\/binding\.gyp|prebuilds\/manifest\.json|prebuilds\/linux-(x64|arm64)\/noshell\.glibc\.node|dist\/[\w/.-]+\.(js|mjs|d\.ts|d\.mts))$/;
    const stray = packed.files.map((f) => f.path).filter((f) => !allowed.test(f));
    expect(stray).toEqual([]);
    expect(packed.files.some((f) => f.path.startsWith('dist/'))).toBe(true);
  });

  it('publint --strict finds nothing', () => {
    const r = run(path.join(BIN, 'publint'), ['--strict', packed.tarball]);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/Suggestions|Warnings|Errors/);
  });

  it('arethetypeswrong: no problems; ESM consumers get the .d.mts, CJS consumers the .d.ts, for the root and each subpath', () => {
    const r = run(path.join(BIN, 'attw'), [packed.tarball, '--format', 'json']);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.problems).toEqual({});
    const resolved = (kind: string) => report.analysis.entrypoints['.'].resolutions[kind].resolution.fileName;
    expect(resolved('node16-esm')).toBe('/node_modules/popen-noshell/dist/index.d.mts');
    expect(resolved('node16-cjs')).toBe('/node_modules/popen-noshell/dist/index.d.ts');
    expect(resolved('bundler')).toBe('/node_modules/popen-noshell/dist/index.d.mts');
    for (const sub of ['check', 'metrics', 'gearman']) {
      const at = (kind: string) => report.analysis.entrypoints[`./${sub}`].resolutions[kind].resolution.fileName;
      expect(at('node16-esm')).toBe(`/node_modules/popen-noshell/dist/${sub}/index.d.mts`);
      expect(at('node16-cjs')).toBe(`/node_modules/popen-noshell/dist/${sub}/index.d.ts`);
      expect(at('bundler')).toBe(`/node_modules/popen-noshell/dist/${sub}/index.d.mts`);
      expect(at('node10')).toBe(`/node_modules/popen-noshell/dist/${sub}/index.d.ts`);
    }
  });

  it('what the CLI needs at run time is a dependency (tinybench for bench), not a devDependency', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(Object.keys(pkg.dependencies)).toEqual(expect.arrayContaining(['node-gyp-build', 'node-addon-api', 'tinybench']));
    expect(Object.keys(pkg.devDependencies)).not.toContain('tinybench');
    // The explicit build from source (npx noshell build-addon) needs the headers at run time.
    expect(pkg.scripts.install).toBeUndefined();
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

  // The TypeScript blocks of README.md and docs/ as a user pastes them, each a
  // module of its own, against the packed tarball's types (docs.test.ts runs
  // them; here they meet the types npm installs).
  it("README's and docs/' TypeScript blocks compile in a strict project (nodenext, exactOptionalPropertyTypes)", () => {
    const pages = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join('docs', f))];
    const blocks: string[] = [];
    for (const page of pages) {
      let open: string[] | null = null;
      for (const line of readFileSync(path.join(ROOT, page), 'utf8').split('\n')) {
        if (open === null && line.startsWith('```ts')) open = [];
        else if (open !== null && line.startsWith('```')) {
          blocks.push(open.join('\n'));
          open = null;
        } else if (open !== null) open.push(line);
      }
    }
    expect(blocks.length).toBeGreaterThanOrEqual(15);
    const files = blocks.map((b, i) => {
      const file = `doc-block-${i + 1}.mts`;
      writeFileSync(path.join(consumer, file), `${b}\nexport {};\n`);
      return file;
    });
    writeFileSync(path.join(consumer, 'tsconfig.readme.json'), JSON.stringify({
      compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2022', strict: true,
        exactOptionalPropertyTypes: true, noEmit: true, skipLibCheck: true, types: ['node'], noUnusedLocals: false },
      files,
    }));
    const r = run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.readme.json'], consumer);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  }, 240_000);

  // The subpath exports at run time, from the installed tarball: each entry's
  // names, one class whatever the entry or module system, and none of the
  // optional dependencies loaded until a feature that needs one is used.
  const OPTIONAL = ['prom-client', 'yaml', 'valibot', 'tinybench'];
  const loadedProbe = `const loaded = () => Object.keys(require.cache).map((f) => f.split('/node_modules/').pop().split('/')[0])
    .filter((d) => ${JSON.stringify(OPTIONAL)}.includes(d)).filter((d, i, a) => a.indexOf(d) === i).sort();`;

  it.each(['popen-noshell', 'popen-noshell/check', 'popen-noshell/metrics', 'popen-noshell/gearman'])(
    'require(%j) and import() of it load none of prom-client, yaml, valibot or tinybench', (entry) => {
      const cjs = run(process.execPath, ['-e', `${loadedProbe} require(${JSON.stringify(entry)}); console.log(JSON.stringify(loaded()));`], consumer);
      expect(cjs.stderr).toBe('');
      expect(JSON.parse(cjs.stdout)).toEqual([]);
      const esm = run(process.execPath, ['--input-type=module', '-e', `import { createRequire } from 'node:module';
        const require = createRequire(process.cwd() + '/x.js'); ${loadedProbe}
        await import(${JSON.stringify(entry)}); console.log(JSON.stringify(loaded()));`], consumer);
      expect(esm.stderr).toBe('');
      expect(JSON.parse(esm.stdout)).toEqual([]);
    });

  it('the probe sees a dependency once a feature loads it: prom-client after createRunnerRegistry()', () => {
    const r = run(process.execPath, ['-e', `${loadedProbe} const { CheckRunner } = require('popen-noshell/check');
      require('popen-noshell/metrics').createRunnerRegistry(new CheckRunner()); console.log(JSON.stringify(loaded()));`], consumer);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual(['prom-client']);
  });

  it('each subpath gives its own names, the same objects as the root, in ESM and CommonJS', () => {
    const probe = (load: string) => `${load}
      const names = Object.fromEntries(Object.entries(sub).map(([k, m]) => [k, Object.keys(m).filter((n) => n !== 'default').sort()]));
      const same = Object.values(sub).every((m) => Object.keys(m).every((n) => n === 'default' || m[n] === root[n]));
      console.log(JSON.stringify({ names, same }));`;
    const cjs = run(process.execPath, ['-e', probe(`const root = require('popen-noshell');
      const sub = { check: require('popen-noshell/check'), metrics: require('popen-noshell/metrics'), gearman: require('popen-noshell/gearman') };`)], consumer);
    const esm = run(process.execPath, ['--input-type=module', '-e', probe(`const root = await import('popen-noshell');
      const sub = { check: await import('popen-noshell/check'), metrics: await import('popen-noshell/metrics'), gearman: await import('popen-noshell/gearman') };`)], consumer);
    for (const r of [cjs, esm]) {
      expect(r.stderr).toBe('');
      const { names, same } = JSON.parse(r.stdout);
      expect(same).toBe(true);
      expect(names.check).toEqual(expect.arrayContaining(['CheckRunner', 'runCheck', 'parsePerfdata', 'parseRange', 'checkRange', 'formatResult', 'STATE_NAMES']));
      expect(names.check).not.toContain('exec');
      expect(names.metrics).toEqual(expect.arrayContaining(['serveMetrics', 'createRunnerSource', 'createRunnerRegistry', 'registerRunnerMetrics', 'configureRunnerMetrics']));
      expect(names.metrics).not.toContain('CheckRunner');
      expect(names.gearman).toEqual(expect.arrayContaining(['GearmanWorker', 'GearmanClient', 'createPayloadCodec', 'parseJob', 'GearmanProtocolError']));
      expect(names.gearman).not.toContain('spawn');
    }
  });

  // The example has @ts-expect-error lines: types that resolved to `any` fail too.
  for (const config of ['node16', 'nodenext', 'bundler']) {
    it(`tsconfig.${config}.json`, () => {
      const r = run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', `tsconfig.${config}.json`], consumer);
      expect(r.stdout + r.stderr).toBe('');
      expect(r.status).toBe(0);
    }, 240_000);
  }
});
