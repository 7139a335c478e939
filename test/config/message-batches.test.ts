// How the loading thread of a reload cuts its answers into messages: by
// count and by size, every item once, in order.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batchRanges } from '../../src/config/message-batches';

describe('batchRanges', () => {
  it('covers every item once, in order; at most 1,000 items and 256 Ki chars a message, but never an empty one', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 400_000 }), { maxLength: 3000 }), (sizes) => {
      const ranges = [...batchRanges(sizes.length, (i) => sizes[i])];
      let next = 0;
      for (const [a, b] of ranges) {
        expect(a).toBe(next);
        expect(b).toBeGreaterThan(a);
        expect(b - a).toBeLessThanOrEqual(1000);
        const chars = sizes.slice(a, b).reduce((x, y) => x + y, 0);
        // Over the bound only as one item alone.
        if (b - a > 1) expect(chars).toBeLessThanOrEqual(256 * 1024);
        next = b;
      }
      expect(next).toBe(sizes.length);
    }));
    // Small items: full batches of 1,000; 100 KB items: two a message.
    expect([...batchRanges(2500, () => 20)]).toEqual([[0, 1000], [1000, 2000], [2000, 2500]]);
    expect([...batchRanges(5, () => 100_000)]).toEqual([[0, 2], [2, 4], [4, 5]]);
    expect([...batchRanges(0, () => 1)]).toEqual([]);
  });
});
