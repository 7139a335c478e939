// The chunk buffers createRunnerSource reuses (src/metrics/scrape/chunk-pool.ts).
import { describe, expect, it } from 'vitest';
import { ChunkPool } from '../../src/metrics/scrape/chunk-pool';

describe('ChunkPool', () => {
  it('gives back what was put, once; takes only whole buffers of its size; keeps at most 12', () => {
    const pool = new ChunkPool(1024);
    const a = pool.get();
    expect(a.length).toBe(1024);
    pool.put(a.subarray(0, 10));
    pool.put(a.subarray(0, 20));
    const b = pool.get();
    expect(b.buffer).toBe(a.buffer);
    expect(b.length).toBe(1024);
    // A new one now: the only one it had is out again.
    expect(pool.get().buffer).not.toBe(a.buffer);
    // Not its size, or not from the start of its memory: not taken.
    pool.put(Buffer.allocUnsafeSlow(2048));
    pool.put(Buffer.allocUnsafeSlow(2048).subarray(1024));
    expect(pool.get().buffer.byteLength).toBe(1024);
    const many = Array.from({ length: 40 }, () => pool.get());
    for (const m of many) pool.put(m);
    const back = Array.from({ length: 40 }, () => pool.get());
    expect(back.filter((x) => many.some((m) => m.buffer === x.buffer)).length).toBe(12);
  });
});
