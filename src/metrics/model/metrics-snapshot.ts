// One scrape's view of a runner: its stats and every exposed check's status
// with the perfdata series it may expose. Metric families are functions of
// it, so the text renderer and a prom-client registry give the same samples.
import type { CheckFigures, CheckStatus } from '../../check/model/check-status';
import type { RunnerStats } from '../../check/model/definition';
import { checkExposure, EXPOSE_ALL, type PerfdataExposure } from './metrics-options';
import type { PerfdataLimit } from './perfdata-limit';

/** CheckRunner's eachCheckStatus() with its records of the last results as they are (internal: not a public name). */
export const eachCheckFigures: unique symbol = Symbol('noshell.eachCheckFigures');

/**
 * CheckRunner's definition of a check as it has it now (undefined: none):
 * with [eachCheckFigures], what lets a scrape keep its columns
 * (scrape-cache.ts; internal: not a public name).
 */
export const checkDefinitionOf: unique symbol = Symbol('noshell.checkDefinitionOf');

/**
 * CheckRunner's checks as a list taken now, each read into one object that
 * the next read overwrites (internal: not a public name). A scrape of
 * 100,000 unchanged checks made ~33 MB of garbage: an object per check and
 * per iterator step, and a set of their ids.
 */
export const checkFiguresList: unique symbol = Symbol('noshell.checkFiguresList');

export interface FiguresList {
  readonly length: number;
  /** Check `i`'s figures, valid until the next read(): whoever keeps them keeps a copy (copyFigures). */
  read(i: number): CheckFigures;
}

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
