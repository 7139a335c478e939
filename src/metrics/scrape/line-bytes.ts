// Exposition text written as UTF-8 straight into buffers (issue 19). A scrape
// of 100,000 checks is ~150 MB: made as strings it was ~300 MB of ropes and
// flat copies to collect per scrape, and flattening and encoding them took a
// third of its time. The per-check families' lines are written by the addon
// from the scrape's columns (native/metrics/scrape-lines.h), a check's lines all in
// one buffer; headers and the aggregate families' text here. A full buffer
// is handed out as a chunk of its own, and nothing is split between two
// chunks: room for the most bytes a piece can take is made before it is
// written.

import { binding } from '../../binding/binding';
import type { ChunkPool } from './chunk-pool';
import { ViewState, type CheckViews } from './check-view';

/** Bytes per chunk (a /metrics response's socket write). */
export const CHUNK_BYTES = 1024 * 1024;

const EMPTY = Buffer.alloc(0);

/** Checks per call of the addon: a call writes 2,000–20,000 lines (~33 ns each), and reads the scrape's segments again. */
const CALL_CHECKS = 2048;

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

  /**
   * Family `family`'s lines (`name`, the labels, the value) of checks
   * `next` … `stop` - 1 of `views`, written by the addon
   * (native/metrics/scrape-lines.h). Stops early, at a check boundary, once a
   * chunk is full (take it) and after CALL_CHECKS checks; gives the
   * check it stopped at.
   */
  lines(family: number, name: Uint8Array, views: CheckViews, next: number, stop: number): number {
    const columns = views.columns();
    const st = views.state;
    st[ViewState.Next] = next;
    st[ViewState.Stop] = Math.min(stop, next + CALL_CHECKS);
    for (;;) {
      st[ViewState.Pos] = this.#pos;
      const need = binding.scrapeLines(family, name, columns, views.text.segments, views.text.endChunks, st, this.#buf);
      this.#pos = st[ViewState.Pos];
      if (need === 0) return st[ViewState.Next];
      // Check st[Next] takes `need` bytes: a full buffer becomes a chunk, a check longer than one gets a buffer of its size.
      if (this.#pos + need <= this.#buf.length) throw new Error(`scrapeLines asked for ${need} bytes with room for them`);
      this.room(need);
      if (this.full) return st[ViewState.Next];
    }
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
