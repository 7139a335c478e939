// The prebuilt addon must load where Node 20 runs: glibc 2.28 and GCC 8's
// libstdc++ (GLIBCXX_3.4.25). A symbol version newer than that in the
// binary's needs would make dlopen fail there (issue 10).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensurePrebuild } from './packed-tarball';

const root = path.resolve(__dirname, '..', '..');

function candidates(): string[] {
  // Both prebuilds (x64, and arm64 read with readelf too), built if missing.
  ensurePrebuild();
  const out = [path.join(root, 'native', 'build', 'Release', 'noshell.node')];
  const prebuilds = path.join(root, 'prebuilds');
  if (existsSync(prebuilds)) {
    for (const dir of readdirSync(prebuilds)) {
      if (!dir.startsWith('linux-')) continue; // manifest.json
      for (const f of readdirSync(path.join(prebuilds, dir))) if (f.endsWith('.node')) out.push(path.join(prebuilds, dir, f));
    }
  }
  return out.filter((f) => existsSync(f));
}

/** Highest version per prefix (GLIBC, GLIBCXX, CXXABI) in the version needs. */
function versionNeeds(file: string): Map<string, number[]> {
  const text = execFileSync('readelf', ['-V', '-W', file], { encoding: 'utf8' });
  const needs = text.slice(text.indexOf('.gnu.version_r'));
  const max = new Map<string, number[]>();
  for (const m of needs.matchAll(/Name: ([A-Z]+)_([\d.]+)\s+Flags: (\S+)/g)) {
    const v = m[2].split('.').map(Number);
    const cur = max.get(m[1]);
    if (cur === undefined || compare(v, cur) > 0) max.set(m[1], v);
  }
  return max;
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

describe('glibc baseline of the addon', () => {
  const hasReadelf = spawnSync('readelf', ['--version']).status === 0;
  if (!hasReadelf) console.warn('skipped: readelf (binutils) is missing');

  it.runIf(hasReadelf)('needs no glibc newer than 2.28 and no libstdc++ newer than GCC 8', () => {
    const files = candidates();
    for (const arch of ['x64', 'arm64']) expect(files).toContain(path.join(root, 'prebuilds', `linux-${arch}`, 'noshell.glibc.node'));
    for (const file of files) {
      const needs = versionNeeds(file);
      expect(needs.has('GLIBC'), file).toBe(true); // the parse found the section
      expect(compare(needs.get('GLIBC')!, [2, 28]), `${file}: GLIBC_${needs.get('GLIBC')!.join('.')}`).toBeLessThanOrEqual(0);
      const cxx = needs.get('GLIBCXX');
      if (cxx !== undefined) expect(compare(cxx, [3, 4, 25]), `${file}: GLIBCXX_${cxx.join('.')}`).toBeLessThanOrEqual(0);
      const abi = needs.get('CXXABI');
      if (abi !== undefined) expect(compare(abi, [1, 3, 11]), `${file}: CXXABI_${abi.join('.')}`).toBeLessThanOrEqual(0);
      // Pinned in memory: reaper threads outlive a worker's environment.
      expect(execFileSync('readelf', ['-d', '-W', file], { encoding: 'utf8' })).toMatch(/FLAGS_1.*NODELETE/);
    }
  });

  it('finds the glibc extensions it looks up at run time on this glibc', async () => {
    // On this machine's glibc (2.36) posix_spawn takes cwd itself: the
    // lookup worked (with NOSHELL_NO_SPAWN_NP it refuses: test/fallbacks).
    const { execFile } = await import('../../src/index');
    const r = await execFile('/bin/pwd', [], { cwd: '/usr', method: 'posix_spawn' });
    expect(r.stdout).toBe('/usr\n');
  });
});
