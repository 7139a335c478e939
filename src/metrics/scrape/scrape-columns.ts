// The columns one scrape reads its checks into (native/metrics/scrape-lines.h's
// layout), kept between scrapes by the runner's metrics state and reused:
// at 100,000 checks they are ~25 MB, and allocated anew each scrape (grown
// by copying) they left glibc holding freed chunks of that size (issue 19).

/** Doubles in a check's row (NS_ROW). */
export const ROW = 14;

type Column = Float64Array | Uint32Array;

function grown<T extends Column>(a: T, need: number): T {
  if (need <= a.length) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(need, 2 * a.length));
  b.set(a);
  return b;
}

/** The columns as the addon takes them, in native/metrics/scrape-lines.h's order. */
export type ViewColumns = [Float64Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Float64Array];

export class ScrapeColumns {
  row = new Float64Array(64 * ROW);
  bits = new Uint32Array(64);
  at = new Uint32Array(64);
  item0 = new Uint32Array(65);
  slot0 = new Uint32Array(64);
  ibits = new Uint32Array(256);
  ipiece = new Uint32Array(256);
  slots = new Float64Array(512);
  n = 0;
  nitems = 0;
  nslots = 0;

  /** Room for check n and for `items` more items with 7 slots each. */
  room(items: number): void {
    this.reserve(this.n + 1, this.nitems + items, this.nslots + 7 * items);
  }

  /** Room for `checks` checks, `items` items and `slots` slots in all (a column grows to twice its length, or to what is asked if more). */
  reserve(checks: number, items: number, slots: number): void {
    if (checks > this.bits.length) {
      this.row = grown(this.row, checks * ROW);
      this.bits = grown(this.bits, checks);
      this.at = grown(this.at, checks);
      this.slot0 = grown(this.slot0, checks);
    }
    if (checks + 1 > this.item0.length) this.item0 = grown(this.item0, checks + 1);
    if (items > this.ibits.length) {
      this.ibits = grown(this.ibits, items);
      this.ipiece = grown(this.ipiece, items);
    }
    if (slots > this.slots.length) this.slots = grown(this.slots, slots);
  }

  /** Items of check i. */
  itemsOf(i: number): number {
    return this.item0[i + 1] - this.item0[i];
  }

  /** Slots of check i (its items' and no more: a check's slots end where the next one's begin). */
  slotsOf(i: number): number {
    return (i + 1 < this.n ? this.slot0[i + 1] : this.nslots) - this.slot0[i];
  }

  /** Appends checks j0 … j1 - 1 of `from` as they are (the same pieces). */
  appendRun(from: ScrapeColumns, j0: number, j1: number): void {
    if (j1 <= j0) return;
    const f0 = from.item0[j0];
    const items = from.item0[j1] - f0;
    const s0 = from.slot0[j0];
    const slots = (j1 < from.n ? from.slot0[j1] : from.nslots) - s0;
    const i0 = this.n;
    const n = j1 - j0;
    this.reserve(i0 + n, this.nitems + items, this.nslots + slots);
    this.row.set(from.row.subarray(j0 * ROW, j1 * ROW), i0 * ROW);
    this.bits.set(from.bits.subarray(j0, j1), i0);
    this.at.set(from.at.subarray(j0, j1), i0);
    const di = this.nitems - f0;
    const ds = this.nslots - s0;
    for (let j = j0; j < j1; j++) {
      this.item0[i0 + j - j0] = from.item0[j] + di;
      this.slot0[i0 + j - j0] = from.slot0[j] + ds;
    }
    this.ibits.set(from.ibits.subarray(f0, f0 + items), this.nitems);
    this.ipiece.set(from.ipiece.subarray(f0, f0 + items), this.nitems);
    this.slots.set(from.slots.subarray(s0, s0 + slots), this.nslots);
    this.nitems += items;
    this.nslots += slots;
    this.n = i0 + n;
    this.item0[this.n] = this.nitems;
  }

  /** Check 0 of `from` in place of check i, whose items and slots are as many (itemsOf, slotsOf); its piece `at` stays. */
  replace(i: number, from: ScrapeColumns): void {
    this.row.set(from.row.subarray(0, ROW), i * ROW);
    this.bits[i] = from.bits[0];
    const item = this.item0[i];
    this.ibits.set(from.ibits.subarray(0, from.nitems), item);
    this.ipiece.set(from.ipiece.subarray(0, from.nitems), item);
    this.slots.set(from.slots.subarray(0, from.nslots), this.slot0[i]);
  }

  /** The first `n` checks only. */
  truncate(n: number): void {
    if (n >= this.n) return;
    this.nitems = this.item0[n];
    this.nslots = this.slot0[n];
    this.n = n;
  }

  get arrays(): ViewColumns {
    return [this.row, this.bits, this.at, this.item0, this.slot0, this.ibits, this.ipiece, this.slots];
  }

  /** Empty again, keeping the memory. */
  clear(): void {
    this.n = 0;
    this.nitems = 0;
    this.nslots = 0;
  }
}

/** One set of columns kept for the next scrape: a scrape takes it (or makes one) and gives it back when done. */
export class ColumnsShelf {
  #spare: ScrapeColumns | null = null;

  take(): ScrapeColumns {
    const c = this.#spare ?? new ScrapeColumns();
    this.#spare = null;
    return c;
  }

  give(c: ScrapeColumns): void {
    c.clear();
    // The larger of two is kept (scrapes that ran at once).
    if (this.#spare === null || this.#spare.bits.length < c.bits.length) this.#spare = c;
  }
}
