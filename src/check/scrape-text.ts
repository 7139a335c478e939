// The text one scrape repeats on many lines, encoded once: each check's
// `{check="<id>"` and each perfdata item's `,label="…",uom="…"`, as UTF-8
// pieces in one growing buffer. A line then copies a piece instead of
// encoding the same text again in each of the 17 families' passes.

export class ScrapeText {
  #buf = Buffer.allocUnsafeSlow(1 << 16);
  #len = 0;
  /** ends[k]: where piece k ends; piece k starts where piece k-1 ends. */
  #ends = new Uint32Array(1 << 12);
  #n = 0;

  /** Adds `s` (already escaped) as the next piece; gives its index. */
  add(s: string): number {
    if (this.#len + 3 * s.length > this.#buf.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(2 * this.#buf.length, this.#len + 3 * s.length));
      this.#buf.copy(grown, 0, 0, this.#len);
      this.#buf = grown;
    }
    this.#len += this.#buf.write(s, this.#len, 'utf8');
    if (this.#n === this.#ends.length) {
      const grown = new Uint32Array(2 * this.#ends.length);
      grown.set(this.#ends);
      this.#ends = grown;
    }
    this.#ends[this.#n] = this.#len;
    return this.#n++;
  }

  /** Copies piece k into `to` at `at`; gives its length. */
  copy(k: number, to: Buffer, at: number): number {
    const start = k === 0 ? 0 : this.#ends[k - 1];
    const end = this.#ends[k];
    // Most pieces are a few dozen bytes: a loop costs less than Buffer#copy's checks.
    if (end - start > 64) return this.#buf.copy(to, at, start, end);
    const from = this.#buf;
    for (let i = start; i < end; i++) to[at++] = from[i];
    return end - start;
  }

  /** Bytes of piece k. */
  bytes(k: number): number {
    return this.#ends[k] - (k === 0 ? 0 : this.#ends[k - 1]);
  }
}
