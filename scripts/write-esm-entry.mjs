// Writes dist/index.mjs: an ES module facade over the CommonJS build, so
// `import { exec } from 'noshell'` and `require('noshell')` share one copy of
// every class (instanceof SpawnError works across both).
import { readFileSync, writeFileSync } from 'node:fs';

const src = readFileSync(new URL('../src/index.ts', import.meta.url), 'utf8');
const names = [];
for (const m of src.matchAll(/^export \{([^}]*)\} from/gm)) {
  for (const part of m[1].split(',')) {
    const name = part.trim().split(/\s+as\s+/).pop();
    if (name) names.push(name);
  }
}
const body = `import cjs from './index.js';\n\nexport const {\n${names.map((n) => `  ${n},`).join('\n')}\n} = cjs;\nexport default cjs;\n`;
writeFileSync(new URL('../dist/index.mjs', import.meta.url), body);
