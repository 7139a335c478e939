// A served source's refresh (MetricsSource.refresh) run again and again
// while it is served: what createRunnerSource's next render reads is then
// read already (src/metrics/scrape/scrape-warm.ts). A pass starts everyMs after the
// last one ended, or four times as long as that one took if longer, so
// passes take at most a fifth of the time; the source skips one when a
// scrape brought what it keeps up to date less than half of everyMs before.
// The timer holds no process open. close() aborts the pass in flight (a
// runner's stops at its next pause) and does not wait for it: a source's
// refresh that never settles cannot hold a close() up.

export class RefreshLoop {
  #timer: NodeJS.Timeout | null = null;
  readonly #abort = new AbortController();

  /** `refresh(minAgeMs, signal)`: one pass, skipped by the source if what it keeps is younger than minAgeMs, stopped once `signal` is aborted. */
  constructor(private readonly refresh: (minAgeMs: number, signal: AbortSignal) => Promise<unknown>, readonly everyMs: number) {}

  start(): void {
    if (this.everyMs > 0 && !this.#abort.signal.aborted) this.#schedule(this.everyMs);
  }

  #schedule(ms: number): void {
    this.#timer = setTimeout(() => void this.#run(), ms);
    this.#timer.unref();
  }

  async #run(): Promise<void> {
    this.#timer = null;
    const signal = this.#abort.signal;
    if (signal.aborted) return;
    const t0 = performance.now();
    try {
      // Half: a pass whose timer fires a little early is not skipped for the last pass's sake.
      await this.refresh(this.everyMs / 2, signal);
    } catch {
      // A failed pass leaves nothing kept (the next scrape reads every check, and says why if it fails too).
    }
    if (!signal.aborted) this.#schedule(Math.max(this.everyMs, 4 * (performance.now() - t0)));
  }

  /** No pass from now on, and the one in flight told to stop. */
  close(): void {
    this.#abort.abort();
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
