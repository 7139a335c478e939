// Runner statistics: counters, plus sliding windows for percentiles and rate.

/** The last `size` samples, for percentiles; sum and count over all samples. */
export class SampleWindow {
  #buf: Float64Array;
  #n = 0;
  #next = 0;
  // A Prometheus summary's _sum and _count are cumulative, unlike its quantiles.
  #sum = 0;
  #total = 0;
  constructor(size = 4096) {
    this.#buf = new Float64Array(size);
  }

  add(v: number): void {
    this.#buf[this.#next] = v;
    this.#next = (this.#next + 1) % this.#buf.length;
    if (this.#n < this.#buf.length) this.#n++;
    this.#sum += v;
    this.#total++;
  }

  get count(): number {
    return this.#n;
  }

  /** Every sample ever added, summed and counted. */
  get total(): { sum: number; count: number } {
    return { sum: this.#sum, count: this.#total };
  }

  /** Nearest-rank percentiles (0–100) of the window; NaN when empty. */
  percentiles(ps: readonly number[]): number[] {
    if (this.#n === 0) return ps.map(() => NaN);
    const sorted = this.#buf.slice(0, this.#n).sort();
    return ps.map((p) => sorted[Math.min(this.#n - 1, Math.max(0, Math.ceil((p / 100) * this.#n) - 1))]);
  }
}

/** Completions per second over the last `spanMs`. */
export class RateWindow {
  #times: number[] = [];
  #head = 0;
  constructor(private readonly spanMs = 10_000) {}

  add(now: number): void {
    this.#times.push(now);
    this.#trim(now);
  }

  rate(now: number, since: number): number {
    this.#trim(now);
    const span = Math.min(this.spanMs, now - since);
    return span > 0 ? ((this.#times.length - this.#head) * 1000) / span : 0;
  }

  #trim(now: number): void {
    while (this.#head < this.#times.length && this.#times[this.#head] <= now - this.spanMs) this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#times.length) {
      this.#times = this.#times.slice(this.#head);
      this.#head = 0;
    }
  }
}

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Over every run since the runner was made (the percentiles cover recent runs). */
  sum: number;
  count: number;
}

export function summarize(w: SampleWindow): Percentiles {
  const [p50, p90, p99, max] = w.percentiles([50, 90, 99, 100]);
  return { p50, p90, p99, max, ...w.total };
}
