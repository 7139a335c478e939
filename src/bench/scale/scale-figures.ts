// The figures of `noshell bench --scale` read from what a noshell run
// reported: latency of the checks due in a period, the longest loop block in
// it, the counts of a reload line.
import type { ScaleEdit } from './scale-checks';
import type { TimedResult, TimedWindow } from './scale-process';

export interface Latency {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  n: number;
}

function pct(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function latencyOf(results: readonly TimedResult[], from: number, to: number): Latency {
  const xs = results.filter((r) => r.scheduledAt >= from && r.scheduledAt <= to).map((r) => r.latencyMs).sort((a, b) => a - b);
  return { p50Ms: pct(xs, 50), p99Ms: pct(xs, 99), maxMs: xs.length === 0 ? NaN : xs[xs.length - 1], n: xs.length };
}

/** The longest block counted in a window that ends in [from, to + one window]. */
export function blockIn(windows: readonly TimedWindow[], from: number, to: number): number {
  let max = 0;
  for (const w of windows) if (w.at >= from && w.at <= to + w.windowMs) max = Math.max(max, w.maxMs);
  return max;
}

/**
 * The same windows' longest block of the loop's own (of each tick's delay,
 * what is left less the loop thread's wait for a CPU in it); NaN if any of
 * them has no such figure.
 */
export function ownBlockIn(windows: readonly TimedWindow[], from: number, to: number): number {
  let max = 0;
  for (const w of windows) {
    if (w.at >= from && w.at <= to + w.windowMs) max = Math.max(max, w.maxOwnMs ?? NaN);
  }
  return max;
}

/** "noshell run: reloaded F: 3 added (…), 3 removed (…), 24 changed (…), 970 unchanged": the counts, or null. */
export function reloadCounts(line: string): ScaleEdit | null {
  const count = (m: RegExpExecArray | null) => (m === null ? NaN : Number(m[1]));
  const e = {
    added: count(/[ ,:](\d+) added\b/.exec(line)), removed: count(/[ ,:](\d+) removed\b/.exec(line)),
    changed: count(/[ ,:](\d+) changed\b/.exec(line)),
  };
  return Object.values(e).some(Number.isNaN) ? null : e;
}
