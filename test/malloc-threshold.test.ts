// glibc's mmap threshold as `noshell run` fixes it (src/malloc-threshold.ts):
// freed blocks of 1 MiB and more leave the process's resident memory, where
// with glibc's moving threshold they stayed in its heap.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { envSetsMmapThreshold } from '../src/malloc-threshold';

const DIST = path.resolve(__dirname, '..', 'dist', 'malloc-threshold.js');

/**
 * In a child Node: one 1.5 MiB block freed (glibc then moves its threshold
 * past that size), then 64 more, each followed by a small block kept, all
 * 64 freed: the resident memory they held, and how much of it left.
 */
function freedMiB(fix: boolean): { held: number; freed: number; set: boolean | null } {
  const script = `
    const set = ${fix} ? require(${JSON.stringify(DIST)}).fixMmapThreshold() : null;
    const rss = () => { const s = require('fs').readFileSync('/proc/self/status', 'utf8'); const i = s.indexOf('VmRSS:'); return parseInt(s.slice(i + 6), 10) / 1024; };
    let first = Buffer.allocUnsafeSlow(1.5 * 2 ** 20).fill(1); first = null; gc(); gc();
    const before = rss();
    const keep = []; let big = [];
    for (let i = 0; i < 64; i++) { big.push(Buffer.allocUnsafeSlow(1.5 * 2 ** 20).fill(1)); keep.push(Buffer.allocUnsafeSlow(64 * 1024).fill(2)); }
    const held = rss() - before;
    big = null; gc(); gc();
    setTimeout(() => { gc(); const now = rss(); console.log(JSON.stringify({ held, freed: before + held - now, set, keep: keep.length })); }, 200);`;
  const env = { ...process.env };
  for (const v of ['GLIBC_TUNABLES', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_', 'MALLOC_TOP_PAD_', 'MALLOC_MMAP_MAX_']) delete env[v];
  return JSON.parse(execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', env }));
}

/** glibc's version, from Node's report (undefined on another C library). */
const glibc = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime;
if (glibc === undefined) console.warn('skipped: fixMmapThreshold\'s effect (glibc only; this Node does not run on glibc)');

describe('fixMmapThreshold', () => {
  it.skipIf(glibc === undefined)('freed blocks of 1.5 MiB leave the resident memory; with glibc\'s own threshold a part stays in the heap', () => {
    const fixed = freedMiB(true);
    expect(fixed.set).toBe(true);
    // 64 blocks of 1.5 MiB written: ~96 MiB held, and all of it freed.
    expect(fixed.held).toBeGreaterThan(90);
    expect(fixed.freed).toBeGreaterThan(0.95 * 96);
    // The control: the same without it keeps some of the freed blocks resident (glibc 2.36 here: ~33 of 96 MiB).
    const moving = freedMiB(false);
    expect(moving.held).toBeGreaterThan(90);
    expect(moving.freed).toBeLessThan(0.9 * 96);
  });

  it('is left to the environment where it sets the threshold', () => {
    expect(envSetsMmapThreshold({})).toBe(false);
    expect(envSetsMmapThreshold({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' })).toBe(false);
    expect(envSetsMmapThreshold({ GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536' })).toBe(true);
    expect(envSetsMmapThreshold({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=65536' })).toBe(true);
    expect(envSetsMmapThreshold({ GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold_x=1' })).toBe(false);
    expect(envSetsMmapThreshold({ MALLOC_MMAP_THRESHOLD_: '65536' })).toBe(true);
    // Those that freeze it at glibc's default when set.
    for (const v of ['MALLOC_TRIM_THRESHOLD_', 'MALLOC_TOP_PAD_', 'MALLOC_MMAP_MAX_']) expect(envSetsMmapThreshold({ [v]: '131072' })).toBe(true);
    for (const t of ['trim_threshold', 'top_pad', 'mmap_max']) expect(envSetsMmapThreshold({ GLIBC_TUNABLES: `glibc.malloc.${t}=131072` })).toBe(true);
    expect(envSetsMmapThreshold({ GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0:glibc.pthread.rseq=0' })).toBe(false);
  });

  it('refuses what is not a whole number of bytes glibc could take', async () => {
    const { binding } = await import('../src/binding');
    for (const bad of [-1, 0.5, 2 ** 31, NaN, '1024', undefined]) {
      expect(() => binding.mmapThreshold(bad as number)).toThrow(/mmapThreshold: bytes must be a whole number/);
    }
  });
});
