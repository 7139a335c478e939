// A served source's refresh (MetricsSource.refresh) run again and again
// while it is served: what createRunnerSource's next render reads is then
// read already (src/check/scrape-warm.ts). A pass starts everyMs after the
// last one ended, or four times as long as that one took if longer, so
// passes take at most a fifth of the time; the timer holds no process open,
// and close() waits for a pass in flight.

export class RefreshLoop {
  #timer: NodeJS.Timeout | null = null;
  #closed = false;
  #inFlight: Promise<unknown> | null = null;

  /** `refresh(minAgeMs)`: one pass, skipped by the source if what it keeps is younger than minAgeMs. */
  constructor(private readonly refresh: (minAgeMs: number) => Promise<unknown>, readonly everyMs: number) {}

  start(): void {
    if (this.everyMs > 0 && !this.#closed) this.#schedule(this.everyMs);
  }

  #schedule(ms: number): void {
    this.#timer = setTimeout(() => void this.#run(), ms);
    this.#timer.unref();
  }

  async #run(): Promise<void> {
    this.#timer = null;
    if (this.#closed) return;
    const t0 = performance.now();
    try {
      await (this.#inFlight = this.refresh(this.everyMs));
    } catch {
      // A failed pass leaves nothing kept (the next scrape reads every check, and says why if it fails too).
    } finally {
      this.#inFlight = null;
    }
    if (!this.#closed) this.#schedule(Math.max(this.everyMs, 4 * (performance.now() - t0)));
  }

  /** No pass from now on; resolves once one in flight has ended. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#inFlight?.catch(() => undefined);
  }
}
