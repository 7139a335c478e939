// What a runner's metrics keep between scrapes, shared by every renderer of
// them (runner.metrics(), metricsChunks(), a prom-client registry): the
// perfdata cap, which series are exposed, and each check's rendered pieces.
import { describe } from '../validate';
import { EXPOSE_ALL, perfdataExposure, type PerfdataExposure, type PerfdataOption } from './metrics-options';
import { perfdataLimitOf, type PerfdataLimit } from './perfdata-limit';

export interface RunnerMetricsOptions {
  /** Perfdata label sets each check may hold (default 100); shared with runner.metrics(). */
  perfdataLimit?: number | undefined;
  /** Longest perfdata label or unit exported, in UTF-8 bytes (default 256); longer items are counted as reason="too_long". */
  perfdataLabelMaxBytes?: number | undefined;
  /** Perfdata series: true (default) for every check, false for none, or { checks, labels } allow-lists (names or `prefix*`). */
  perfdata?: PerfdataOption | undefined;
}

/** One check's sample lines per per-check family, and what they were rendered from. */
export interface CheckPieces {
  definition: object;
  last: object | null;
  running: boolean;
  /** RunnerMetricsState.generation when rendered. */
  generation: number;
  /** The scrape that rendered them, and the latest that saw the check. */
  renderedBy: number;
  seenBy: number;
  /** Sample lines (each ending in a line feed) by per-check family, in order. */
  text: readonly string[];
}

export class RunnerMetricsState {
  exposure: PerfdataExposure = EXPOSE_ALL;
  /** Bumped when the exposure changes: every check's pieces are rendered again. */
  generation = 0;
  scrapes = 0;
  readonly pieces = new Map<string, CheckPieces>();
  constructor(readonly limit: PerfdataLimit) {}

  /** Forgets checks no scrape since `scrape` saw (removed), and what the cap held for them. */
  sweep(scrape: number): void {
    for (const step = this.sweepSteps(scrape); !step.next().done;);
  }

  /**
   * sweep() a thousand checks a step: a sliced scrape runs it between turns
   * of the event loop (two passes over 100,000 checks held it ~10 ms).
   */
  *sweepSteps(scrape: number): Generator<void, void, undefined> {
    let n = 0;
    for (const [id, p] of this.pieces) {
      if (p.seenBy < scrape) this.pieces.delete(id);
      if ((++n & 1023) === 0) yield;
    }
    yield* this.limit.retainSteps(this.pieces);
  }
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
  const state = metricsStateOf(runner);
  if (exposure !== undefined) {
    state.exposure = exposure;
    state.generation++;
  }
}
