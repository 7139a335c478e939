// Writes the ES module facade of each entry point (dist/index.mjs, and
// dist/check/, dist/metrics/, dist/gearman/ index.mjs for the subpath
// exports) over the CommonJS build, so `import { exec } from 'popen-noshell'`
// and `require('popen-noshell')` share one copy of every class (instanceof
// SpawnError works across both, and CheckRunner from the root is the one from
// popen-noshell/check). And each one's .d.mts: an ESM consumer (module
// node16/nodenext) resolves the "import" condition to a .d.mts, and a .d.ts
// there would be read as CommonJS types for an ES module ("masquerading as CJS").
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const SRC = new URL('../src/', import.meta.url).pathname;
const DIST = new URL('../dist/', import.meta.url).pathname;
export const ENTRIES = ['index', 'check/index', 'metrics/index', 'gearman/index'];

/** The value names a module re-exports: `export { a, b as c } from` lines, and `export * from` followed. */
function valueNames(file) {
  const src = readFileSync(file, 'utf8');
  const names = [];
  for (const m of src.matchAll(/^export \{([^}]*)\} from/gm)) {
    for (const part of m[1].split(',')) {
      const name = part.trim().split(/\s+/).pop(); // `a` or `a as b`
      if (name) names.push(name);
    }
  }
  for (const m of src.matchAll(/^export \* from '([^']+)';/gm)) {
    const target = path.resolve(path.dirname(file), m[1]);
    names.push(...valueNames(existsSync(`${target}.ts`) ? `${target}.ts` : path.join(target, 'index.ts')));
  }
  return names;
}

for (const entry of ENTRIES) {
  const names = valueNames(path.join(SRC, `${entry}.ts`));
  if (new Set(names).size !== names.length) throw new Error(`${entry}: a name is exported twice`);
  const base = path.basename(entry);
  const body = `import cjs from './${base}.js';\n\nexport const {\n${names.map((n) => `  ${n},`).join('\n')}\n} = cjs;\nexport default cjs;\n`;
  writeFileSync(path.join(DIST, `${entry}.mjs`), body);
  // Re-exports the CommonJS declarations: one set of types, like one set of classes.
  writeFileSync(path.join(DIST, `${entry}.d.mts`), `export * from './${base}.js';\nimport cjs from './${base}.js';\nexport default cjs;\n`);
}
