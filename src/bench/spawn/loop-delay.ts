// How late a 1 ms timer fires while a driver runs: the event loop's delay,
// over exactly the window the rest of the measurement covers.
//
// perf_hooks.monitorEventLoopDelay, used before, contradicted the blocked
// time next to it (0.6 ms of "loop delay p99" beside 46 ms blocked per call):
// its first callback only starts its clock, and at concurrency 16 with 1 GiB
// held cp.exec forks ~15 times back to back in the window's first loop turn,
// so the histogram kept 0–2 samples taken after that block (or none: "-").
// Here the window's start and end are samples too, and each delay is the
// timer's lateness (the gap less its 1 ms), so a stall always shows in full.

const INTERVAL_MS = 1;

export interface LoopDelayStats {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  samples: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export class LoopDelay {
  private readonly delays: number[] = [];
  private timer: NodeJS.Timeout | null = null;
  private last = 0;
  private readonly now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.now = now;
  }

  /** Starts a window (clears an earlier one). */
  start(): void {
    this.stopTimer();
    this.delays.length = 0;
    this.last = this.now();
    this.timer = setInterval(() => this.sample(), INTERVAL_MS);
  }

  /** Ends the window; the time since the last tick counts as a sample too. */
  stop(): LoopDelayStats {
    if (this.timer !== null) this.sample();
    this.stopTimer();
    const sorted = this.delays.slice().sort((a, b) => a - b);
    return {
      p50Ms: sorted.length === 0 ? 0 : percentile(sorted, 50),
      p99Ms: sorted.length === 0 ? 0 : percentile(sorted, 99),
      maxMs: sorted.length === 0 ? 0 : sorted[sorted.length - 1],
      samples: sorted.length,
    };
  }

  private sample(): void {
    const t = this.now();
    // libuv's timers have 1 ms granularity: a tick may come up to ~1 ms
    // early by the clock; that is no delay.
    this.delays.push(Math.max(0, t - this.last - INTERVAL_MS));
    this.last = t;
  }

  private stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
