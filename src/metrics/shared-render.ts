// One render of a metrics source, shared by every request that comes while
// it is in flight or recent: its chunks are kept as UTF-8 Buffers as they
// come, and each request writes them as they arrive instead of waiting for
// the whole body. At 100,000 checks a body is ~40 MB: collected as strings
// and then written, it survived young-generation collections (20-30 ms
// each, copied) and its first byte came after the whole render.
import type { MetricsSource } from './metrics-server';

export class SharedRender {
  readonly chunks: Buffer[] = [];
  done = false;
  error: Error | null = null;
  readonly startedAt = performance.now();
  #wake: Array<() => void> = [];

  constructor(source: MetricsSource) {
    void this.#run(source);
  }

  async #run(source: MetricsSource): Promise<void> {
    try {
      if (source.chunks === undefined) this.#push(await source.metrics());
      else for await (const c of source.chunks()) this.#push(c);
    } catch (e) {
      this.error = e instanceof Error ? e : new Error(String(e));
    } finally {
      this.done = true;
      this.#notify();
    }
  }

  #push(text: string): void {
    if (text === '') return;
    this.chunks.push(Buffer.from(text, 'utf8'));
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = [];
    for (const w of wake) w();
  }

  /** Resolves once there is a chunk past `have`, or the render has ended. */
  more(have: number): Promise<void> {
    if (this.chunks.length > have || this.done) return Promise.resolve();
    return new Promise<void>((resolve) => this.#wake.push(resolve));
  }
}
