// The layout the code keeps (docs/architecture.md): src/ in layers that
// import only downwards (the lint rule, tried here on imports it must refuse
// and accept), native/ in folders by layer with includes that only go down,
// and test/ in the folders of src/.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Linter } from 'eslint';
import tsParser from '@typescript-eslint/parser';
import { describe, expect, it } from 'vitest';
import { LAYERS, layerProblem, layersRule } from '../../eslint/layers.mjs';

const ROOT = path.resolve(__dirname, '..', '..');

/** Files under dir (relative to it, with /), recursively, build output left out. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => f.split(path.sep).join('/'))
    .filter((f) => !f.startsWith('build/') && f !== 'build');
}

describe('src/: the layer rule', () => {
  it.each([
    ['check/model/definition.ts', 'metrics/model/metrics-options.ts', 'a higher layer'],
    ['check/runner/runner.ts', 'config/checks-file.ts', 'a higher layer'],
    ['config/run-reload.ts', 'daemon/log-file.ts', 'a folder of the same layer'],
    ['metrics/serve/metrics-server.ts', 'metrics/model/families.ts', 'a folder of the same layer'],
    ['index.ts', 'cli/main.ts', 'a higher layer'],
    ['index.ts', 'config/checks-file.ts', 'a higher layer'],
    ['process/spawn.ts', 'check/index.ts', 'a higher layer'],
    ['gearman/worker/worker.ts', 'bench/progress.ts', 'a higher layer'],
    ['util/quote-text.ts', 'binding/binding.ts', 'a higher layer'],
    ['stray.ts', 'util/validate.ts', 'in no layer'],
    ['util/validate.ts', 'newfolder/x.ts', 'in no layer'],
  ])('refuses %s -> %s (%s)', (from, to, why) => {
    expect(layerProblem(from, to)).toContain(why);
  });

  it.each([
    ['metrics/model/metrics-options.ts', 'check/model/check-status.ts'],
    ['check/runner/runner.ts', 'metrics/scrape/runner-text.ts'],
    ['check/runner/runner.ts', 'check/runner/heap.ts'],
    ['config/checks-file.ts', 'check/runner/runner.ts'],
    ['cli/main.ts', 'bench/scale/scale.ts'],
    ['index.ts', 'gearman/index.ts'],
    ['check/index.ts', 'check/runner/runner.ts'],
    ['check/index.ts', 'util/duration.ts'],
    ['cli.ts', 'cli/main.ts'],
  ])('accepts %s -> %s', (from, to) => {
    expect(layerProblem(from, to)).toBeNull();
  });

  it('places every folder of src/ in a layer, and holds no file at its root but the two entry points', () => {
    const files = filesUnder(path.join(ROOT, 'src')).filter((f) => f.endsWith('.ts'));
    // An entry point (check/index.ts…) stands at its subtree's layer, not its folder's.
    const folders = new Set(files.filter((f) => !f.endsWith('/index.ts')).map((f) => path.posix.dirname(f)).filter((d) => d !== '.'));
    const placed = new Set(LAYERS.flat());
    expect([...folders].filter((d) => !placed.has(d))).toEqual([]);
    expect(files.filter((f) => !f.includes('/')).sort()).toEqual(['cli.ts', 'index.ts']);
  });

  // The rule as ESLint runs it: every import form, types and require() included.
  it('reports each import form that climbs, and none that goes down', () => {
    const linter = new Linter({ cwd: ROOT });
    const config = [{
      files: ['**/*.ts'],
      languageOptions: { parser: tsParser },
      plugins: { noshell: { rules: { layers: layersRule } } },
      rules: { 'noshell/layers': 'error' },
    }] as Linter.Config[];
    const code = [
      "import { a } from '../../metrics/model/families';",
      "import type { B } from '../../config/checks-file';",
      "export { c } from '../../cli/main';",
      "export * from '../../daemon/log-file';",
      "const d = require('../../bench/progress');",
      "const e = import('../../gearman/client');",
      "type F = typeof import('../../metrics/serve/turn-budget');",
      "import { g } from '../plugin/perfdata';",
      "import { h } from './check-status';",
      "import { i } from '../../util/validate';",
    ].join('\n');
    const messages = linter.verify(code, config, { filename: path.join(ROOT, 'src', 'check', 'model', 'new-file.ts') });
    expect(messages.map((m) => m.line)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(messages.every((m) => m.ruleId === 'noshell/layers')).toBe(true);
  });

  it('keeps Prometheus text and prom-client in metrics/, and YAML and valibot out of cli/', () => {
    const files = filesUnder(path.join(ROOT, 'src')).filter((f) => f.endsWith('.ts'));
    const text = (f: string) => readFileSync(path.join(ROOT, 'src', f), 'utf8');
    expect(files.filter((f) => !f.startsWith('metrics/') && /# (?:TYPE|HELP) |from 'prom-client'|'prom-client'\)/.test(text(f)))).toEqual([]);
    expect(files.filter((f) => f.startsWith('cli/') && /from '(?:yaml|valibot)'/.test(text(f)))).toEqual([]);
  });
});

describe('native/: folders by layer', () => {
  const NATIVE = path.join(ROOT, 'native');
  const sources = filesUnder(NATIVE).filter((f) => /\.(c|cc|h)$/.test(f));
  const includes = (f: string) => [...readFileSync(path.join(NATIVE, f), 'utf8').matchAll(/^#include ([<"])([^>"]+)[>"]/gm)]
    .map((m) => (m[1] === '"' ? path.posix.normalize(path.posix.join(path.posix.dirname(f), m[2])) : `<${m[2]}>`));

  it('holds binding.gyp and the folders core/, executor/, napi/, metrics/: no source at its top', () => {
    expect(sources.filter((f) => !f.includes('/'))).toEqual([]);
    expect([...new Set(sources.map((f) => f.split('/')[0]))].sort()).toEqual(['core', 'executor', 'metrics', 'napi']);
    expect(readdirSync(NATIVE).filter((f) => f !== 'build').sort()).toEqual(['binding.gyp', 'core', 'executor', 'metrics', 'napi']);
  });

  it('builds every .c and .cc it holds, and names none it does not', () => {
    const gyp = readFileSync(path.join(NATIVE, 'binding.gyp'), 'utf8');
    const listed = [...gyp.matchAll(/^[ \t]*"([\w/-]+\.(?:c|cc))",?$/gm)].map((m) => m[1]).sort();
    expect(listed).toEqual(sources.filter((f) => /\.(c|cc)$/.test(f)).sort());
  });

  // core/ is plain C that knows no Node; executor/ builds on core/ and libuv;
  // metrics/ stands alone; napi/ is the only place N-API and V8 appear.
  it.each([
    ['core', ['core']],
    ['executor', ['core', 'executor']],
    ['metrics', ['metrics']],
  ])('%s/ includes only its own headers and those of %j, and no Node header', (folder, may) => {
    for (const f of sources.filter((s) => s.startsWith(`${folder}/`))) {
      for (const inc of includes(f)) {
        if (inc.startsWith('<')) expect(inc, f).not.toMatch(/^<(?:napi|node_api|node|v8)\b/);
        else expect(may, `${f} includes ${inc}`).toContain(inc.split('/')[0]);
      }
    }
  });
});

describe('test/: the folders of src/', () => {
  // Suites beside the mirror: the C core's own tests, the package as users
  // install it, and bad input, faults, leaks and soak across every layer.
  const SUITES = ['native', 'package', 'robustness'];

  it('puts each test file in a folder named after a folder of src/, or in one of the suites', () => {
    const srcTop = new Set(readdirSync(path.join(ROOT, 'src'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name));
    const tests = filesUnder(path.join(ROOT, 'test')).filter((f) => f.endsWith('.test.ts'));
    expect(tests.length).toBeGreaterThan(80);
    expect(tests.filter((f) => !f.includes('/'))).toEqual([]);
    expect(tests.filter((f) => !srcTop.has(f.split('/')[0]) && !SUITES.includes(f.split('/')[0]))).toEqual([]);
    // Every folder of src/ has tests of its own.
    expect([...srcTop].filter((d) => !tests.some((f) => f.startsWith(`${d}/`)))).toEqual([]);
  });
});
