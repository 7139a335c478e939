// Chunk buffers a source hands out and gets back once they are written
// (MetricsSource.release): a scrape of 100,000 checks is ~143 buffers of
// 1 MiB, and allocating them anew each scrape made V8 count 143 MB of
// external memory per scrape and collect its whole heap for it.

/**
 * Buffers kept for reuse at most: the chunks a render has out at once (8
 * with one reader, the one being filled among them), and some. They stay
 * between scrapes, so each is a MiB of the process's resident memory.
 */
const MAX_FREE = 12;

export class ChunkPool {
  readonly #free: Buffer[] = [];
  constructor(readonly size: number) {}

  get(): Buffer {
    return this.#free.pop() ?? Buffer.allocUnsafeSlow(this.size);
  }

  /** A chunk no one reads any more: its memory is reused if it is one of the pool's. */
  put(chunk: Uint8Array): void {
    if (chunk.buffer.byteLength !== this.size || chunk.byteOffset !== 0 || this.#free.length >= MAX_FREE) return;
    if (this.#free.some((b) => b.buffer === chunk.buffer)) return;
    this.#free.push(Buffer.from(chunk.buffer, 0, this.size));
  }
}
