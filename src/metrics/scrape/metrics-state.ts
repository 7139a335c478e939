// What a runner's metrics keep between scrapes, shared by every renderer of
// them (runner.metrics(), metricsChunks(), a prom-client registry): the
// perfdata cap, which series are exposed, and the columns scrapes reuse.
import { describe } from '../../util/validate';
import { EXPOSE_ALL, perfdataExposure, type PerfdataExposure, type PerfdataOption } from '../model/metrics-options';
import { perfdataLimitOf, type PerfdataLimit } from '../model/perfdata-limit';
import { ScrapeCache } from './scrape-cache';
import { ColumnsShelf } from './scrape-columns';

export interface RunnerMetricsOptions {
  /** Perfdata label sets each check may hold (default 100); shared with runner.metrics(). */
  perfdataLimit?: number | undefined;
  /** Longest perfdata label or unit exported, in UTF-8 bytes (default 256); longer items are counted as reason="too_long". */
  perfdataLabelMaxBytes?: number | undefined;
  /** Perfdata series: true (default) for every check, false for none, or { checks, labels } allow-lists (names or `prefix*`). */
  perfdata?: PerfdataOption | undefined;
}

export class RunnerMetricsState {
  exposure: PerfdataExposure = EXPOSE_ALL;
  /** The columns a scrape of a source other than a runner reads the checks into, kept for the next one. */
  readonly columns = new ColumnsShelf();
  /** A runner's checks as its last scrape read them, updated by the next (scrape-cache.ts). */
  readonly cache = new ScrapeCache();
  constructor(readonly limit: PerfdataLimit) {}
}

const states = new WeakMap<object, RunnerMetricsState>();

export function metricsStateOf(runner: object): RunnerMetricsState {
  let s = states.get(runner);
  if (s === undefined) states.set(runner, (s = new RunnerMetricsState(perfdataLimitOf(runner))));
  return s;
}

/** Sets which series a runner exposes and its perfdata caps (TypeError on bad options); shared by all its renderers. */
export function configureRunnerMetrics(runner: object, options: RunnerMetricsOptions = {}): void {
  if (typeof options !== 'object' || options === null) throw new TypeError(`metrics options must be an object, got ${describe(options)}`);
  const { perfdataLimit, perfdataLabelMaxBytes, perfdata } = options;
  if (perfdataLimit !== undefined && (!Number.isInteger(perfdataLimit) || perfdataLimit < 0)) {
    throw new TypeError(`perfdataLimit must be a non-negative integer, got ${String(perfdataLimit)}`);
  }
  if (perfdataLabelMaxBytes !== undefined && (!Number.isInteger(perfdataLabelMaxBytes) || perfdataLabelMaxBytes < 1)) {
    throw new TypeError(`perfdataLabelMaxBytes must be a positive integer, got ${String(perfdataLabelMaxBytes)}`);
  }
  const exposure = perfdata === undefined ? undefined : perfdataExposure(perfdata);
  perfdataLimitOf(runner, perfdataLimit, perfdataLabelMaxBytes);
  if (exposure !== undefined) {
    const state = metricsStateOf(runner);
    state.exposure = exposure;
    // What passes admitted under the old exposure and no scrape showed is read again under the new one.
    state.limit.reconsider();
  }
}
