// One render of a metrics source, shared by the requests that join it: each
// writes its chunks as they come instead of waiting for the whole body.
//
// A render keeps its chunks while they are few (keepChars: UTF-16 units of
// text, bytes of a Uint8Array):
// then a request may join it at any time, and one that comes within the
// server's maxAgeMs of its start gets that body. Past keepChars a chunk is
// let go once every reader has taken it, the render takes no new readers,
// and it makes its next chunk only while the slowest reader is within
// AHEAD chunks of it: a 150 MB body (100,000 checks) is never held whole,
// and a render whose readers have all gone stops. A runner's chunks are
// made from its statuses as they are asked for (metricsChunks).
import type { MetricsSource } from './metrics-source';

/**
 * Chunks a render may make past its slowest reader once it lets chunks go:
 * what the reader's socket has been handed (writeBody's 4 MiB, four of a
 * runner's 1 MiB chunks) and as many made ahead. A runner's source keeps
 * the chunks it gets back for reuse, so this is also what it holds between
 * scrapes: at 16, 17 MiB of a 100,000-check run's 400 MiB (issue 19).
 */
const AHEAD = 8;

/** A request's place in a render: the index of the next chunk it will take. */
export interface Reader {
  at: number;
}

export class SharedRender {
  /** Chunks from #base on (those before it were let go). */
  #chunks: Array<string | Uint8Array> = [];
  #base = 0;
  #keptChars = 0;
  #readers = new Set<Reader>();
  #abandoned = false;
  done = false;
  error: Error | null = null;
  readonly startedAt = performance.now();
  /** Resolves when the render has ended, failed, or stopped for want of readers. */
  readonly ended: Promise<void>;
  #wake: Array<() => void> = [];
  #room: (() => void) | null = null;

  readonly #release: ((chunk: Uint8Array) => void) | null;

  constructor(source: MetricsSource, readonly keepChars: number) {
    this.#release = source.release?.bind(source) ?? null;
    this.ended = this.#run(source);
  }

  /** A chunk let go: its bytes go back to the source (a failing release is the source's problem, not the render's). */
  #letGo(chunk: string | Uint8Array): void {
    if (this.#release === null || typeof chunk === 'string') return;
    try {
      this.#release(chunk);
    } catch {
      // Nothing to do: the chunk is simply not reused.
    }
  }

  /** Chunks made so far, let go or not. */
  get length(): number {
    return this.#base + this.#chunks.length;
  }

  /** Whether a request may still join: every chunk is kept, and the render goes on or ended well. */
  get joinable(): boolean {
    return this.#base === 0 && !this.#abandoned && this.error === null;
  }

  /** Chunk i; only one not let go (a reader's own next ones always are kept). */
  chunk(i: number): string | Uint8Array {
    return this.#chunks[i - this.#base];
  }

  join(): Reader {
    const r: Reader = { at: 0 };
    this.#readers.add(r);
    return r;
  }

  /** The reader has taken the chunks before `at` (written them, for bytes: the socket has them). */
  passed(r: Reader, at: number): void {
    if (at <= r.at) return;
    r.at = at;
    this.#trim();
  }

  leave(r: Reader): void {
    if (!this.#readers.delete(r)) return;
    this.#trim();
  }

  async #run(source: MetricsSource): Promise<void> {
    try {
      if (source.chunks !== undefined) {
        for await (const c of source.chunks()) {
          this.#push(c);
          await this.#roomForMore();
          if (this.#abandoned) break;
        }
      } else this.#push(await source.metrics());
    } catch (e) {
      this.error = e instanceof Error ? e : new Error(String(e));
    } finally {
      this.done = true;
      this.#notify();
    }
  }

  #push(chunk: string | Uint8Array): void {
    // A source of the library's user may yield anything: what is not text or bytes fails the render.
    if (typeof chunk !== 'string' && !(chunk instanceof Uint8Array)) throw new TypeError('a metrics source yielded something other than text or bytes');
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#keptChars += chunk.length;
    this.#trim();
    this.#notify();
  }

  #letsGo(): boolean {
    return this.#keptChars > this.keepChars || this.#base > 0;
  }

  /** Lets go of the chunks every reader has taken, once past keepChars; stops a render nobody reads then. */
  #trim(): void {
    if (!this.#letsGo()) return;
    if (this.#readers.size === 0) {
      this.#abandoned = true;
      for (const c of this.#chunks) this.#letGo(c);
      this.#base += this.#chunks.length;
      this.#chunks = [];
      this.#keptChars = 0;
    } else {
      let slowest = Infinity;
      for (const r of this.#readers) slowest = Math.min(slowest, r.at);
      while (this.#base < slowest && this.#chunks.length > 0) {
        const c = this.#chunks.shift()!;
        this.#keptChars -= c.length;
        this.#base++;
        this.#letGo(c);
      }
    }
    const room = this.#room;
    if (room !== null && (this.#abandoned || this.#hasRoom())) {
      this.#room = null;
      room();
    }
  }

  #hasRoom(): boolean {
    if (!this.#letsGo()) return true;
    let slowest = Infinity;
    for (const r of this.#readers) slowest = Math.min(slowest, r.at);
    return this.length - slowest < AHEAD;
  }

  #roomForMore(): Promise<void> {
    if (this.#abandoned || this.#hasRoom()) return Promise.resolve();
    return new Promise<void>((resolve) => (this.#room = resolve));
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = [];
    for (const w of wake) w();
  }

  /** Resolves once there may be a chunk past `have` (look again), or the render has ended. */
  more(have: number): Promise<void> {
    if (this.length > have || this.done) return Promise.resolve();
    return new Promise<void>((resolve) => this.#wake.push(resolve));
  }
}
