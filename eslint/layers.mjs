// The layer rule of src/ (docs/architecture.md): a folder imports only from
// its own files and from folders of a lower layer; folders of one layer do
// not import each other. An import is any `import … from`, `export … from`,
// `import()` or `require()` of a relative path, types included. A folder
// that is in no layer is an error: a new folder takes its place here.
import path from 'node:path';

/** Bottom to top. Folders in one entry are one layer: neither imports the other. */
export const LAYERS = [
  ['util'],
  ['binding'],
  ['command'],
  ['process'],
  ['check/plugin'],
  ['check'],
  ['check/model'],
  ['metrics/model', 'metrics/serve'],
  ['metrics/text'],
  ['metrics/scrape'],
  ['metrics/prom'],
  ['check/runner'],
  ['gearman/protocol'],
  ['gearman/payload'],
  ['gearman'],
  ['gearman/worker'],
  ['<library entry>'],
  ['config', 'daemon'],
  ['bench'],
  ['bench/spawn'],
  ['bench/gearman', 'bench/nagios', 'bench/pipeline', 'bench/scale'],
  ['cli'],
];

/**
 * Entry points: each re-exports a subtree, and stands at the layer of its
 * highest folder. src/index.ts is the library (none of the commands' code),
 * src/cli.ts the command line.
 */
const ENTRIES = new Map([
  ['index.ts', '<library entry>'],
  ['cli.ts', 'cli'],
  ['check/index.ts', 'check/runner'],
  ['metrics/index.ts', 'metrics/prom'],
  ['gearman/index.ts', 'gearman/worker'],
]);

const rank = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, i])));

function placeOf(srcFile) {
  const entry = ENTRIES.get(srcFile);
  if (entry !== undefined) return { layer: entry, subtree: path.posix.dirname(srcFile) };
  const folder = path.posix.dirname(srcFile);
  return { layer: folder === '.' ? '<src root>' : folder, subtree: null };
}

/** Why `from` (a file under src/) may not import `to` (one under src/), or null when it may. */
export function layerProblem(from, to) {
  const own = placeOf(from);
  const toFolder = path.posix.dirname(to);
  const target = ENTRIES.get(to) ?? (toFolder === '.' ? '<src root>' : toFolder);
  if (!rank.has(own.layer)) return `src/${from} is in no layer: give its folder a place in eslint/layers.mjs`;
  if (!rank.has(target)) return `src/${to} is in no layer: give its folder a place in eslint/layers.mjs`;
  if (target === own.layer && own.subtree === null) return null;
  if (own.subtree !== null && (own.subtree === '.' ? true : toFolder === own.subtree || toFolder.startsWith(`${own.subtree}/`))) {
    if (own.subtree !== '.' || rank.get(target) <= rank.get(own.layer)) return null;
  }
  if (rank.get(target) < rank.get(own.layer)) return null;
  const how = rank.get(target) === rank.get(own.layer) ? 'a folder of the same layer' : 'a higher layer';
  return `src/${from} (layer ${own.layer}) imports src/${to}, ${how} (${target}): a layer imports only from those below it`;
}

function resolveSpec(file, spec, srcDir) {
  const abs = path.resolve(path.dirname(file), spec);
  const rel = path.relative(srcDir, abs).split(path.sep).join('/');
  if (rel.startsWith('..')) return null;
  return /\.[cm]?[jt]s$/.test(rel) ? rel : `${rel}.ts`;
}

export const layersRule = {
  meta: { type: 'problem', schema: [], docs: { description: 'src/ folders import only from lower layers' } },
  create(context) {
    const srcDir = path.join(context.cwd, 'src');
    const file = context.filename;
    const from = path.relative(srcDir, file).split(path.sep).join('/');
    if (from.startsWith('..') || from.endsWith('.d.ts')) return {};
    const check = (node, spec) => {
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      let to = resolveSpec(file, spec, srcDir);
      if (to === null) return;
      // `./check/index` and `./check` name the same entry.
      if (!to.endsWith('index.ts') && ENTRIES.has(to.replace(/\.ts$/, '/index.ts'))) to = to.replace(/\.ts$/, '/index.ts');
      const problem = layerProblem(from, to);
      if (problem !== null) context.report({ node, message: problem });
    };
    return {
      ImportDeclaration: (n) => check(n, n.source.value),
      ExportNamedDeclaration: (n) => n.source && check(n, n.source.value),
      ExportAllDeclaration: (n) => check(n, n.source.value),
      ImportExpression: (n) => n.source.type === 'Literal' && check(n, n.source.value),
      CallExpression: (n) => {
        if (n.callee.type === 'Identifier' && n.callee.name === 'require' && n.arguments[0]?.type === 'Literal') check(n, n.arguments[0].value);
      },
      TSImportType: (n) => {
        const a = n.argument?.literal ?? n.argument;
        if (a?.type === 'Literal') check(n, a.value);
      },
    };
  },
};
