import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A consumer project with noshell in node_modules, loading the built package.
let consumer: string;
beforeAll(() => {
  consumer = mkdtempSync(path.join(os.tmpdir(), 'noshell-consumer-'));
  mkdirSync(path.join(consumer, 'node_modules'));
  symlinkSync(path.resolve(__dirname, '..', '..'), path.join(consumer, 'node_modules', 'popen-noshell'));
});
afterAll(() => rmSync(consumer, { recursive: true, force: true }));

const script = (load: string) => `${load}
const r = await exec(['/bin/echo', 'hi']);
const sameClass = (await import('popen-noshell')).SpawnError === require('popen-noshell').SpawnError;
console.log(JSON.stringify({ out: r.stdout, sameClass, names: Object.keys(require('popen-noshell')).sort() }));`;

describe('package entry points', () => {
  it('works with import and with require', () => {
    const esm = execFileSync(process.execPath, ['--input-type=module', '-e',
      `import { createRequire } from 'node:module'; const require = createRequire(process.cwd() + '/x.js');
       ${script("import { exec } from 'popen-noshell';")}`], { cwd: consumer, encoding: 'utf8' });
    const cjs = execFileSync(process.execPath, ['-e',
      `(async () => { ${script("const { exec } = require('popen-noshell');")} })().catch((e) => { console.error(e); process.exit(1); });`],
    { cwd: consumer, encoding: 'utf8' });
    for (const out of [esm, cjs]) {
      const parsed = JSON.parse(out);
      expect(parsed.out).toBe('hi\n');
      expect(parsed.sameClass).toBe(true);
      expect(parsed.names).toEqual(expect.arrayContaining(['exec', 'execFile', 'spawn', 'SpawnError', 'ExecError', 'ShellSyntaxError']));
    }
  });
});
