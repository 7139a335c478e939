import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// The plain-C core on its own, built with AddressSanitizer and UBSan.
const root = path.resolve(__dirname, '..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-core-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('native core (C, no Node)', () => {
  it('passes its own tests under AddressSanitizer and UBSan', () => {
    const bin = path.join(dir, 'core-test');
    execFileSync('cc', [
      '-O1', '-g', '-Wall', '-Wextra', '-Werror', '-fsanitize=address,undefined', '-fno-sanitize-recover=all',
      '-fno-omit-frame-pointer', '-o', bin,
      path.join(root, 'test', 'native', 'core-test.c'), path.join(root, 'native', 'spawn.c'), path.join(root, 'native', 'stdio.c'),
      path.join(root, 'native', 'resolve.c'), path.join(root, 'native', 'child.c'),
    ]);
    const out = execFileSync(bin, { encoding: 'utf8', env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' } });
    expect(out).toMatch(/^(\d+) passed, 0 failed\n$/);
    expect(Number(out.split(' ')[0])).toBeGreaterThan(40);
  });
});
