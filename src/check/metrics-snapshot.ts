// One scrape's view of a runner: its stats and every check's status with the
// perfdata series it may expose. Metric families are functions of it, so the
// text renderer and a prom-client registry give the same samples.
import type { CheckStatus } from './check-status';
import type { RunnerStats } from './definition';
import type { PerfdataLimit } from './perfdata-limit';

/** What metrics need from a CheckRunner. */
export interface MetricsSource {
  stats(): RunnerStats;
  checkStatus(): CheckStatus[];
}

export interface CheckSnapshot {
  status: CheckStatus;
  perf: ReturnType<PerfdataLimit['read']>;
}

export interface Snapshot {
  stats: RunnerStats;
  checks: CheckSnapshot[];
  perfdataLimit: number;
}

export type MetricType = 'gauge' | 'counter' | 'summary';

export interface Sample {
  labels: Readonly<Record<string, string>>;
  value: number;
  /** A summary's _sum and _count lines. */
  suffix?: '_sum' | '_count';
}

export interface MetricFamily {
  name: string;
  help: string;
  type: MetricType;
  labelNames: readonly string[];
  samples(s: Snapshot): Sample[];
}

export function takeSnapshot(source: MetricsSource, limit: PerfdataLimit): Snapshot {
  const statuses = source.checkStatus();
  // Series of a removed check disappear, and so does what the cap held for it.
  limit.retain(new Set(statuses.map((s) => s.id)));
  return {
    stats: source.stats(),
    checks: statuses.map((status) => ({ status, perf: limit.read(status) })),
    perfdataLimit: limit.limit,
  };
}
