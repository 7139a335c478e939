// Writes dist/index.mjs: an ES module facade over the CommonJS build, so
// `import { exec } from 'popen-noshell'` and `require('popen-noshell')` share one copy of
// every class (instanceof SpawnError works across both). And dist/index.d.mts,
// its types: an ESM consumer (module node16/nodenext) resolves the "import"
// condition to a .d.mts, and a .d.ts there would be read as CommonJS types
// for an ES module ("masquerading as CJS", issue 10).
import { readFileSync, writeFileSync } from 'node:fs';

const src = readFileSync(new URL('../src/index.ts', import.meta.url), 'utf8');
const names = [];
for (const m of src.matchAll(/^export \{([^}]*)\} from/gm)) {
  for (const part of m[1].split(',')) {
    const name = part.trim().split(/\s+/).pop(); // `a` or `a as b`
    if (name) names.push(name);
  }
}
const body = `import cjs from './index.js';\n\nexport const {\n${names.map((n) => `  ${n},`).join('\n')}\n} = cjs;\nexport default cjs;\n`;
writeFileSync(new URL('../dist/index.mjs', import.meta.url), body);
// Re-exports the CommonJS declarations: one set of types, like one set of classes.
const types = `export * from './index.js';\nimport cjs from './index.js';\nexport default cjs;\n`;
writeFileSync(new URL('../dist/index.d.mts', import.meta.url), types);
