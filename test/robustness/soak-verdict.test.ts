// The soak's memory verdict (scripts/soak/report.mjs) on samples of real
// runs: a late step then level passes, a steady leak fails.
import { expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { verdict } from '../../scripts/soak/report.mjs';

const MiB = 1024 * 1024;

function run(rest: number[], heap: number[] = rest.map(() => 6.5), ops = rest.map((_, k) => 20_000 + Math.round((30_000 * k) / (rest.length - 1)))) {
  // Samples from ops 20,000 to 50,000 (evenly spread unless given); the young generation level.
  const samples = rest.map((r, k) => ({
    label: k === 0 ? 'baseline' : 'interval', ops: ops[k], fds: 26, threads: 9, children: 0,
    rss: (r + 52) * MiB, young: 52 * MiB, rssOutsideYoung: r * MiB, heapUsed: heap[k] * MiB, heapTotal: 10 * MiB,
  }));
  const first = { ...samples[0], ops: 0, label: 'start' };
  return verdict({
    warmup: 20_000, measured: 30_000, done: 50_000, concurrency: 32, elapsedS: 33, first, baseline: samples[0], last: samples[samples.length - 1],
    samples: [first, ...samples], failures: [], failuresByOp: {}, maxRssGrowth: 5, maxHeapGrowth: 10,
  }).summary;
}

it('memory that settles once, late, then stays level passes (a fresh-clone CI run on Node 26)', () => {
  // RSS outside the young generation of that run, MiB, at its samples from the baseline to the end.
  const s = run(
    [71.7, 70.8, 78.2, 79.8, 79.2, 79.6, 79.8, 79.8, 80.7, 80.1, 79.0, 80.3, 79.5, 79.7], undefined,
    [20_000, 22_275, 25_213, 28_129, 30_000, 31_015, 34_250, 37_482, 40_000, 40_575, 43_568, 46_517, 49_533, 50_000],
  );
  expect(s.floors.rssOutsideYoung.map((b: number) => Number((b / MiB).toFixed(1)))).toEqual([70.8, 79.2, 79.0]);
  expect(s.growth.rssOutsideYoungPct).toBeLessThan(0);
  expect(s.problems).toEqual([]);
});

it('a steady leak fails in every form: first to last third and each step grow alike', () => {
  // 300 bytes per operation kept off the V8 heap: 75.2 → 78.6 → 82.3 MiB by thirds (docs/development.md, Soak).
  const leak = Array.from({ length: 13 }, (_, k) => 74.6 + (k * 8.6) / 12);
  const s = run(leak);
  expect(s.growth.rssOutsideYoungPct).toBeGreaterThan(5);
  expect(s.problems).toEqual([`RSS outside the young generation grew ${s.growth.rssOutsideYoungPct} % after the warm-up (bound 5 %)`]);
});

it('a leak on the V8 heap fails on heap used', () => {
  const s = run(Array(13).fill(77), Array.from({ length: 13 }, (_, k) => 6.5 + k * 0.25));
  expect(s.growth.heapUsedPct).toBeGreaterThan(10);
  expect(s.problems).toEqual([`heap used grew ${s.growth.heapUsedPct} % after the warm-up (bound 10 %)`]);
});

it('a step in the last third alone passes; a step in each of the first two thirds fails', () => {
  expect(run([77, 77, 77, 77, 77, 77, 77, 77, 77, 83, 83, 83, 83]).problems).toEqual([]);
  const twice = run([77, 77, 81, 81, 81, 81, 85, 85, 85, 85, 85, 85, 85]);
  expect(twice.problems.length).toBe(1);
});
