// The text a scrape repeats on many lines, encoded once: each check's
// `{check="<id>"` and each perfdata item's `,label="…",uom="…"`, as UTF-8
// pieces. A line then copies a piece instead of encoding the same text again
// in each of the 17 families' passes. A runner's pieces are kept for its
// next scrape (scrape-cache.ts), which only adds those of changed checks.
//
// The pieces are one run of bytes kept in segments of 256 KiB, and where
// each piece ends in chunks of 65,536 offsets: nothing is grown by copying.
// A buffer that doubled up to ~16 MB (and its offsets to 4 MB) at 100,000
// checks was malloc'd and freed every scrape, and glibc then raised its mmap
// threshold to that size and kept such chunks in its heap: RSS rose ~15 MiB a
// scrape with the V8 heap flat (issue 19). Allocations of one size are reused.

import { escapeLabelValue } from '../text/metrics-text';

const SEG_BITS = 18;
const SEG = 1 << SEG_BITS;
const SEG_MASK = SEG - 1;
const IDX_BITS = 16;
const IDX = 1 << IDX_BITS;
const IDX_MASK = IDX - 1;
/** Offsets are 32-bit: a scrape's pieces past 4 GiB are refused (ids and labels that large are not a monitoring setup). */
const MAX_BYTES = 2 ** 32 - 1;

export class ScrapeText {
  readonly #segs: Buffer[] = [];
  /** Bytes written, over all segments. */
  #len = 0;
  /** Where piece k ends: #ends[k >>> IDX_BITS][k & IDX_MASK]; piece k starts where piece k-1 ends. */
  readonly #ends: Uint32Array[] = [];
  #n = 0;

  /** Adds `s` (already escaped) as the next piece; gives its index. */
  add(s: string): number {
    this.#text(s);
    return this.end();
  }

  /** Appends `s` (already escaped) to the piece being made. */
  #text(s: string): void {
    const at = this.#len & SEG_MASK;
    // A piece may run on into the next segment: encoded apart first (rare at this size).
    if (SEG - at >= 3 * s.length && this.#len + 3 * s.length <= MAX_BYTES) {
      this.#len += this.#seg(this.#len >>> SEG_BITS).write(s, at, 'utf8');
    } else {
      this.#put(Buffer.from(s, 'utf8'));
    }
  }

  /** Appends bytes as they are (ASCII text encoded once) to the piece being made. */
  ascii(b: Uint8Array): void {
    const at = this.#len & SEG_MASK;
    if (SEG - at < b.length || this.#len + b.length > MAX_BYTES) {
      this.#put(b);
      return;
    }
    const seg = this.#seg(this.#len >>> SEG_BITS);
    for (let i = 0; i < b.length; i++) seg[at + i] = b[i];
    this.#len += b.length;
  }

  /**
   * Appends a label value to the piece being made, escaped as the format
   * says (escapeLabelValue): ASCII a byte at a time, no string made; text
   * with other characters goes through escapeLabelValue and UTF-8.
   */
  escaped(s: string): void {
    // A source in plain JavaScript may give a number or an object: written as its text, as a template string did.
    if (typeof s !== 'string') s = String(s);
    const at = this.#len & SEG_MASK;
    // An escape is 2 bytes for 1 unit; other text at most 3 bytes a unit.
    if (SEG - at < 3 * s.length || this.#len + 3 * s.length > MAX_BYTES) {
      this.#text(escapeLabelValue(s));
      return;
    }
    const seg = this.#seg(this.#len >>> SEG_BITS);
    let p = at;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.#len += p - at;
        this.#text(escapeLabelValue(s.slice(i)));
        return;
      }
      if (c === 0x5c || c === 0x22) {
        seg[p++] = 0x5c;
        seg[p++] = c;
      } else if (c === 0x0a) {
        seg[p++] = 0x5c;
        seg[p++] = 0x6e;
      } else {
        seg[p++] = c;
      }
    }
    this.#len += p - at;
  }

  /** Adds ASCII text (a number's) as a piece of its own; gives its index. */
  number(s: string): number {
    const at = this.#len & SEG_MASK;
    if (SEG - at < s.length || this.#len + s.length > MAX_BYTES) return this.add(s);
    const seg = this.#seg(this.#len >>> SEG_BITS);
    for (let i = 0; i < s.length; i++) seg[at + i] = s.charCodeAt(i);
    this.#len += s.length;
    return this.end();
  }

  /** Pieces made. */
  get count(): number {
    return this.#n;
  }

  /** Bytes written. */
  get bytes(): number {
    return this.#len;
  }

  /** The segments of SEG bytes (the addon reads the pieces there, native/metrics/scrape-lines.h). */
  get segments(): readonly Buffer[] {
    return this.#segs;
  }

  /** Where each piece ends, in chunks of 65,536. */
  get endChunks(): readonly Uint32Array[] {
    return this.#ends;
  }

  /** Ends the piece being made (what ascii() and escaped() appended since the last end); gives its index. */
  end(): number {
    const k = this.#n;
    const chunk = k >>> IDX_BITS;
    if (chunk === this.#ends.length) this.#ends.push(new Uint32Array(IDX));
    this.#ends[chunk][k & IDX_MASK] = this.#len;
    this.#n = k + 1;
    return k;
  }

  #seg(i: number): Buffer {
    while (this.#segs.length <= i) this.#segs.push(Buffer.allocUnsafeSlow(SEG));
    return this.#segs[i];
  }

  #put(b: Uint8Array): void {
    if (this.#len + b.length > MAX_BYTES) throw new RangeError('a scrape\'s ids and labels take more than 4 GiB');
    for (let i = 0; i < b.length;) {
      const at = this.#len & SEG_MASK;
      const n = Math.min(SEG - at, b.length - i);
      this.#seg(this.#len >>> SEG_BITS).set(b.subarray(i, i + n), at);
      i += n;
      this.#len += n;
    }
  }
}
