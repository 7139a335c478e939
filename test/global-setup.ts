// Builds the C fixtures (and the dist/ the package tests import) once per run.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';

export default function setup(): void {
  const root = path.resolve(__dirname, '..');
  const fixtures = path.join(root, 'test', 'fixtures');
  const bin = path.join(fixtures, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const file of readdirSync(fixtures)) {
    if (!file.endsWith('.c')) continue;
    const out = path.join(bin, file.slice(0, -2));
    execFileSync('cc', ['-O2', '-Wall', '-Wextra', '-o', out, path.join(fixtures, file)], { stdio: 'inherit' });
  }
  execFileSync('npm', ['run', '--silent', 'build:ts'], { cwd: root, stdio: 'inherit' });
}
