// One render of a metrics source, shared by every request that comes while
// it is in flight or recent: its chunks are kept as they come, and each
// request writes them as they arrive instead of waiting for the whole body.
// A chunk is kept as the strings it is made of (MetricsSource.parts), joined
// by each request as it writes: at 100,000 checks with five perfdata items
// each a body is 150 MB, text the runner's kept pieces hold already. Kept
// joined (as Buffers) it was a second copy of all of it.
import type { MetricsSource } from './metrics-server';

export class SharedRender {
  readonly chunks: Array<readonly string[]> = [];
  done = false;
  error: Error | null = null;
  readonly startedAt = performance.now();
  /** Resolves when the render has ended, failed or not. */
  readonly ended: Promise<void>;
  #wake: Array<() => void> = [];

  constructor(source: MetricsSource) {
    this.ended = this.#run(source);
  }

  async #run(source: MetricsSource): Promise<void> {
    try {
      if (source.parts !== undefined) for await (const p of source.parts()) this.#push(p);
      else if (source.chunks !== undefined) for await (const c of source.chunks()) this.#push([c]);
      else this.#push([await source.metrics()]);
    } catch (e) {
      this.error = e instanceof Error ? e : new Error(String(e));
    } finally {
      this.done = true;
      this.#notify();
    }
  }

  #push(parts: readonly string[]): void {
    // A source of the library's user may yield anything: what is not text fails the render.
    if (!Array.isArray(parts) || parts.some((p) => typeof p !== 'string')) throw new TypeError('a metrics source yielded something other than text');
    if (parts.every((p) => p === '')) return;
    this.chunks.push(parts);
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = [];
    for (const w of wake) w();
  }

  /** Resolves once there may be a chunk past `have` (look again), or the render has ended. */
  more(have: number): Promise<void> {
    if (this.chunks.length > have || this.done) return Promise.resolve();
    return new Promise<void>((resolve) => this.#wake.push(resolve));
  }
}
