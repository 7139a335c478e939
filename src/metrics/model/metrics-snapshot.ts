// One scrape's view of a runner: its stats and every exposed check's status
// with the perfdata series it may expose. Metric families are functions of
// it, so the text renderer and a prom-client registry give the same samples.
import type { CheckFigures, CheckStatus } from '../../check/model/check-status';
import { checkDefinitionOf, checkFiguresList, eachCheckFigures, type FiguresList } from '../../check/model/figures-list';
import type { RunnerStats } from '../../check/model/definition';
import { checkExposure, EXPOSE_ALL, type PerfdataExposure } from './metrics-options';
import type { PerfdataLimit } from './perfdata-limit';

/** What metrics need from a CheckRunner. */
export interface MetricsSource {
  stats(): RunnerStats;
  checkStatus(): CheckStatus[];
  /** The same, one at a time (CheckRunner has it): a sliced scrape need not hold every status at once. */
  eachCheckStatus?(): Iterable<CheckStatus>;
  [eachCheckFigures]?(): Iterable<CheckFigures>;
  [checkDefinitionOf]?(id: string): object | undefined;
  [checkFiguresList]?(): FiguresList;
}

/** The checks of a source the cheapest way it has: CheckRunner's records, else its statuses one at a time, else all at once. */
export function checkFiguresOf(source: MetricsSource): Iterable<CheckFigures> {
  return source[eachCheckFigures]?.() ?? source.eachCheckStatus?.() ?? source.checkStatus();
}

export interface CheckSnapshot {
  status: CheckFigures;
  /** null: the check's perfdata series are off. */
  perf: ReturnType<PerfdataLimit['read']> | null;
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

/** A check as its series see it, or null when it exposes none. */
export function exposeCheck(status: CheckFigures, limit: PerfdataLimit, exposure: PerfdataExposure): CheckSnapshot | null {
  const e = checkExposure(status, exposure);
  if (!e.series) return null;
  if (!e.perfdata) return { status, perf: null };
  const perf = limit.read(status);
  if (exposure.allLabels) return { status, perf };
  return { status, perf: { ...perf, series: perf.series.filter((p) => exposure.labels(p.label)) } };
}

export function takeSnapshot(source: MetricsSource, limit: PerfdataLimit, exposure: PerfdataExposure = EXPOSE_ALL): Snapshot {
  const statuses = [...checkFiguresOf(source)];
  // Series of a removed check disappear, and so does what the cap held for it.
  limit.retain(new Set(statuses.map((s) => s.id)));
  const checks: CheckSnapshot[] = [];
  for (const status of statuses) {
    const c = exposeCheck(status, limit, exposure);
    if (c !== null) checks.push(c);
  }
  return { stats: source.stats(), checks, perfdataLimit: limit.limit };
}
