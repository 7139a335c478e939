// CheckRunner's running totals: counts by outcome and state, latency and
// execution windows, the completion rate. What stats() reports besides the
// runner's live sizes.
import type { CheckRunResult } from '../model/definition';
import { RateWindow, SampleWindow, summarize, type Percentiles } from '../model/stats';

export interface CounterFigures {
  completed: number;
  timedOut: number;
  spawnErrors: number;
  truncated: number;
  viaShell: number;
  skipped: number;
  byState: { OK: number; WARNING: number; CRITICAL: number; UNKNOWN: number };
  checksPerSecond: number;
  latencyMs: Percentiles;
  executionMs: Percentiles;
}

export class RunnerCounters {
  readonly #counts = { completed: 0, timedOut: 0, spawnErrors: 0, truncated: 0, viaShell: 0, skipped: 0 };
  readonly #byState = [0, 0, 0, 0];
  readonly #latency = new SampleWindow();
  readonly #execution = new SampleWindow();
  readonly #rate = new RateWindow();

  /** Counts a completed run. */
  add(r: CheckRunResult): void {
    this.#counts.completed++;
    this.#byState[r.state]++;
    if (r.timedOut) this.#counts.timedOut++;
    if (r.spawnError !== null) this.#counts.spawnErrors++;
    if (r.truncated) this.#counts.truncated++;
    if (r.viaShell) this.#counts.viaShell++;
    this.#latency.add(r.latencyMs);
    this.#execution.add(r.durationMs);
    this.#rate.add(r.finishedAt);
  }

  /** Regular slots skipped because the run before was still running or queued. */
  skip(n: number): void {
    this.#counts.skipped += n;
  }

  figures(now: number, startedAt: number): CounterFigures {
    const b = this.#byState;
    return {
      ...this.#counts,
      byState: { OK: b[0], WARNING: b[1], CRITICAL: b[2], UNKNOWN: b[3] },
      checksPerSecond: this.#rate.rate(now, startedAt),
      latencyMs: summarize(this.#latency),
      executionMs: summarize(this.#execution),
    };
  }
}
