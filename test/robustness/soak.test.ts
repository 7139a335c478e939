// The soak in its CI form (issue 8): mixed operations through the built
// package, in a process of its own, which must keep its fds, threads and
// children, fail no operation, and whose memory must level off once warm.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect, it } from 'vitest';

const SOAK = path.resolve(__dirname, '..', '..', 'scripts', 'soak.mjs');
// Issue 18: 20,000 operations measured from the start "grew" 39 % on Node 24
// every time: its V8 grows the young generation to 128 MiB over the first
// ~20,000 operations (20 and 22 keep 32 MiB), and RSS follows as those pages
// are first used. Memory is now measured after WARMUP operations, over OPS
// more, from the lowest sample of each third: the least of first → last
// third and twice each step (scripts/soak/report.mjs says why that and why
// outside the young generation; test/robustness/soak-verdict.test.ts checks it). In healthy runs on 20, 22, 24 and 26 the floors grew by at
// most 3.1 % (RSS) and 4.0 % (heap used); a leak of 300 bytes per operation
// off the V8 heap makes RSS grow 8.6-9.4 %, in Buffers 19-20 % (heap used
// 35-41 %): docs/development.md, Soak.
const WARMUP = 20_000;
const OPS = 30_000;
const MAX_RSS_GROWTH = 5;
const MAX_HEAP_GROWTH = 10;

function runSoak(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [
      '--expose-gc', SOAK, '--warmup', String(WARMUP), '--ops', String(OPS), '--concurrency', '32', '--interval', '2',
      '--max-rss-growth', String(MAX_RSS_GROWTH), '--max-heap-growth', String(MAX_HEAP_GROWTH), '--json',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const guard = setTimeout(() => child.kill('SIGKILL'), 290_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}

it('soak: 20,000 warm-up and 30,000 measured mixed operations leave fds, threads and children flat, memory level, and fail none', async () => {
  const { code, stdout, stderr } = await runSoak();
  const summary = JSON.parse(stdout.trim().split('\n').pop() ?? 'null');
  // The table and verdict (stderr) say what went wrong if anything did.
  expect({ code, problems: summary?.problems, failures: summary?.failures }, stderr).toEqual({ code: 0, problems: [], failures: [] });
  expect(summary.ops).toBe(WARMUP + OPS);
  expect(summary.baseline.ops).toBe(WARMUP);
  expect(summary.end.ops).toBe(WARMUP + OPS);
  expect(summary.samples.filter((s: { label: string }) => s.label === '1/3' || s.label === '2/3').map((s: { ops: number }) => s.ops))
    .toEqual([WARMUP + OPS / 3, WARMUP + (OPS * 2) / 3]);
  expect(summary.growth).toMatchObject({ fds: 0, threads: 0, children: 0 });
  expect(summary.end.children).toBe(0);
  // Flat from the first sample on, warm-up included, not only once warm.
  expect(summary.end.fds).toBe(summary.start.fds);
  expect(summary.end.threads).toBe(summary.start.threads);
  expect(summary.growth.rssOutsideYoungPct, stderr).toBeLessThan(MAX_RSS_GROWTH);
  expect(summary.growth.heapUsedPct, stderr).toBeLessThan(MAX_HEAP_GROWTH);
  // Every sample, taken with nothing in flight, shows the same fds and no child.
  for (const s of summary.samples) {
    expect({ label: s.label, ops: s.ops, fds: s.fds, children: s.children }).toEqual({ label: s.label, ops: s.ops, fds: summary.start.fds, children: 0 });
  }
}, 300_000);
