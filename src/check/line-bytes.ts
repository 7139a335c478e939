// Exposition text written as UTF-8 straight into buffers (issue 19). A scrape
// of 100,000 checks is ~150 MB: made as strings it was ~300 MB of ropes and
// flat copies to collect per scrape, and flattening and encoding them took a
// third of its time. Here each line's pieces are copied into the current
// buffer, ASCII a byte at a time, and a full buffer is handed out as a chunk
// of its own. A piece is never split between two chunks: room for the most
// bytes it can take (3 per UTF-16 unit) is made before it is written.

import { num } from './metrics-text';
import type { ChunkPool } from './chunk-pool';
import type { ScrapeText } from './scrape-text';

/** Bytes per chunk (a /metrics response's socket write). */
export const CHUNK_BYTES = 1024 * 1024;

const EMPTY = Buffer.alloc(0);

/** The text of 0 … 1023, most figures a check has (state, attempt, counts, small values). */
const SMALL = Array.from({ length: 1024 }, (_, i) => Buffer.from(String(i)));

/** The most bytes num() gives (String of a double: "-1.7976931348623157e+308" is 24). */
const NUM_MAX = 32;

/**
 * Writes num(v) at b[p] (room for NUM_MAX bytes made); gives the end. Whole
 * numbers up to 2^53 are written digit by digit (String(v) gives the same
 * digits: no exponent below 1e21); others go through num(), whose text is
 * ASCII.
 */
function writeNum(b: Buffer, p: number, v: number): number {
  if (v >= 0 && v < 1024 && Number.isInteger(v)) {
    const d = SMALL[v];
    for (let i = 0; i < d.length; i++) b[p++] = d[i];
    return p;
  }
  if (Number.isSafeInteger(v)) {
    if (v < 0) {
      b[p++] = 0x2d;
      v = -v;
    }
    const start = p;
    do {
      b[p++] = 0x30 + (v % 10);
      v = Math.floor(v / 10);
    } while (v > 0);
    for (let i = start, j = p - 1; i < j; i++, j--) {
      const t = b[i];
      b[i] = b[j];
      b[j] = t;
    }
    return p;
  }
  const s = num(v);
  for (let i = 0; i < s.length; i++) b[p++] = s.charCodeAt(i);
  return p;
}

export class LineBytes {
  #buf: Buffer;
  #pos = 0;
  readonly #full: Buffer[] = [];

  /**
   * `size`: bytes per chunk, about (a piece is not split, so one may be up
   * to a piece shorter). `pool`: where chunk buffers of `size` come from.
   */
  constructor(readonly size = CHUNK_BYTES, readonly pool: ChunkPool | null = null) {
    this.#buf = this.#fresh(size);
  }

  #fresh(n: number): Buffer {
    return this.pool !== null && n <= this.size ? this.pool.get() : Buffer.allocUnsafeSlow(Math.max(this.size, n));
  }

  /** Makes room for `n` more bytes: a full buffer becomes a chunk, a piece longer than a chunk gets a buffer of its size. */
  room(n: number): void {
    if (this.#pos + n <= this.#buf.length) return;
    if (this.#pos > 0) this.#full.push(this.#buf.subarray(0, this.#pos));
    this.#buf = this.#fresh(n);
    this.#pos = 0;
  }

  byte(c: number): void {
    this.room(1);
    this.#buf[this.#pos++] = c;
  }

  /** A sample value as the format writes it (num()). */
  num(v: number): void {
    this.room(NUM_MAX);
    this.#pos = writeNum(this.#buf, this.#pos, v);
  }

  /**
   * A whole sample line: `name`, piece `at` of `t`, piece `extra` too unless
   * it is -1, `labels` (text after them, or null), `} `, the value and a line
   * feed. One look at the room left for all of it: a scrape writes millions.
   */
  line(name: Uint8Array, t: ScrapeText, at: number, extra: number, labels: Uint8Array | null, v: number): void {
    const more = (extra < 0 ? 0 : t.bytes(extra)) + (labels === null ? 0 : labels.length);
    this.room(name.length + t.bytes(at) + more + NUM_MAX + 3);
    const b = this.#buf;
    let p = this.#pos;
    for (let i = 0; i < name.length; i++) b[p++] = name[i];
    p += t.copy(at, b, p);
    if (extra >= 0) p += t.copy(extra, b, p);
    if (labels !== null) for (let i = 0; i < labels.length; i++) b[p++] = labels[i];
    b[p++] = 0x7d; // }
    b[p++] = 0x20;
    p = writeNum(b, p, v);
    b[p++] = 0x0a;
    this.#pos = p;
  }

  /** Text as it is, UTF-8 (names, numbers, escaped values). */
  raw(s: string): void {
    this.room(3 * s.length);
    const b = this.#buf;
    let p = this.#pos;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.#pos = p + b.write(i === 0 ? s : s.slice(i), p, 'utf8');
        return;
      }
      b[p++] = c;
    }
    this.#pos = p;
  }

  /** Whether a chunk is full (take(false) has one). */
  get full(): boolean {
    return this.#full.length > 0;
  }

  /** The full chunks, and with `all` the one being filled too. */
  take(all: boolean): Buffer[] {
    if (all && this.#pos > 0) {
      this.#full.push(this.#buf.subarray(0, this.#pos));
      // A buffer is taken again only if more is written.
      this.#buf = EMPTY;
      this.#pos = 0;
    }
    return this.#full.splice(0);
  }
}
