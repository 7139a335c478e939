// Grab bookkeeping for one gearmand connection. Several GRAB_JOB_UNIQ may be
// in flight at once: gearmand answers each, in order, with JOB_ASSIGN_UNIQ or
// NO_JOB. One grab at a time would tie the worker's rate to that round trip
// (with plugins that finish in a millisecond, the worker waited on gearmand
// rather than running max-worker checks); grabbing for every free slot at
// once would answer each NOOP on an idle queue with a burst of NO_JOBs. So
// the window works like a slow start: one grab after a wake-up, doubled for
// every job assigned (up to the free slots), back to one on NO_JOB.

export type GrabPhase = 'down' | 'active' | 'sleeping';

export class GrabWindow {
  phase: GrabPhase = 'down';
  /** Grabs sent and not yet answered. */
  outstanding = 0;
  private window = 1;

  constructor(private limit: number) {}

  /** A new max-worker: the window shrinks to it at once, grows to it as jobs come. */
  setLimit(limit: number): void {
    this.limit = limit;
    this.window = Math.min(this.window, limit);
  }

  /** A fresh connection (abilities just announced). */
  connected(): void {
    this.phase = 'active';
    this.outstanding = 0;
    this.window = 1;
  }

  disconnected(): void {
    this.phase = 'down';
    this.outstanding = 0;
  }

  /** How many more grabs to send now, given `free` unclaimed slots. */
  wanted(free: number): number {
    if (this.phase !== 'active') return 0;
    return Math.max(0, Math.min(this.window - this.outstanding, free));
  }

  sent(n: number): void {
    this.outstanding += n;
  }

  /** A JOB_ASSIGN_UNIQ answered one grab. */
  assigned(): void {
    if (this.outstanding > 0) this.outstanding--;
    this.window = Math.min(this.window * 2, this.limit);
  }

  /**
   * NO_JOB answered one grab. True when it was the last one in flight: the
   * queue was empty when gearmand read it, so the caller sends PRE_SLEEP
   * (gearmand answers that with NOOP at once if a job came in meanwhile).
   */
  noJob(): boolean {
    if (this.outstanding > 0) this.outstanding--;
    this.window = 1;
    if (this.outstanding > 0 || this.phase !== 'active') return false;
    this.phase = 'sleeping';
    return true;
  }

  /** NOOP: work may be waiting. */
  woken(): void {
    if (this.phase === 'sleeping') this.phase = 'active';
  }
}
