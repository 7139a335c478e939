// The scheduler's data structures against plain models: the indexed heap
// (push, pop, delete of any item) and the queue of due checks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Fifo } from '../../src/check/runner/fifo';
import { MinHeap, type HeapItem } from '../../src/check/runner/heap';

interface Item extends HeapItem {
  id: number;
  key: number;
}

type Op = { op: 'push'; key: number } | { op: 'pop' } | { op: 'delete'; pick: number } | { op: 'deleteAbsent'; pick: number };

const ops = fc.array(fc.oneof(
  fc.record({ op: fc.constant('push' as const), key: fc.integer({ min: 0, max: 50 }) }),
  fc.record({ op: fc.constant('pop' as const) }),
  fc.record({ op: fc.constant('delete' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('deleteAbsent' as const), pick: fc.nat() }),
), { maxLength: 300 });

describe('MinHeap (indexed)', () => {
  it('pops in key order and deletes any item, each item knowing its place', () => {
    fc.assert(fc.property(ops, (list: Op[]) => {
      const heap = new MinHeap<Item>((i) => i.key);
      const model: Item[] = [];
      const gone: Item[] = [];
      let next = 0;
      for (const o of list) {
        if (o.op === 'push') {
          const item = { id: next++, key: o.key, heapIndex: -1 };
          heap.push(item);
          model.push(item);
        } else if (o.op === 'pop') {
          const top = heap.pop();
          if (model.length === 0) {
            expect(top).toBeUndefined();
            continue;
          }
          const min = Math.min(...model.map((i) => i.key));
          expect(top!.key).toBe(min);
          expect(top!.heapIndex).toBe(-1);
          model.splice(model.indexOf(top!), 1);
          gone.push(top!);
        } else if (o.op === 'delete') {
          if (model.length === 0) continue;
          const item = model[o.pick % model.length];
          expect(heap.delete(item)).toBe(true);
          expect(item.heapIndex).toBe(-1);
          model.splice(model.indexOf(item), 1);
          gone.push(item);
        } else {
          // An item taken out already, or one never in it: nothing changes.
          const item = gone.length > 0 ? gone[o.pick % gone.length] : { id: -1, key: 0, heapIndex: -1 };
          expect(heap.delete(item)).toBe(false);
        }
        expect(heap.size).toBe(model.length);
        if (model.length > 0) expect(heap.peek()!.key).toBe(Math.min(...model.map((i) => i.key)));
      }
      // What is left comes out sorted, every item once.
      const rest: number[] = [];
      for (let top = heap.pop(); top !== undefined; top = heap.pop()) rest.push(top.id);
      expect(rest.sort((a, b) => a - b)).toEqual(model.map((i) => i.id).sort((a, b) => a - b));
    }), { numRuns: 500 });
  });

  it('refuses an item that is in a heap already', () => {
    const heap = new MinHeap<Item>((i) => i.key);
    const item = { id: 1, key: 1, heapIndex: -1 };
    heap.push(item);
    expect(() => heap.push(item)).toThrow(/in a heap already/);
    expect(heap.size).toBe(1);
  });

  it('a delete from the middle of 100,000 items keeps the order', () => {
    const heap = new MinHeap<Item>((i) => i.key);
    const items = Array.from({ length: 100_000 }, (_, id) => ({ id, key: (id * 7919) % 100_003, heapIndex: -1 }));
    for (const i of items) heap.push(i);
    let deleted = 0;
    for (let k = 0; k < items.length; k += 10) if (heap.delete(items[k])) deleted++;
    expect(deleted).toBe(10_000);
    // Checked without an expect() per item (100,000 of them take seconds).
    let last = -1;
    const popped: number[] = [];
    let outOfOrder = 0;
    for (let top = heap.pop(); top !== undefined; top = heap.pop()) {
      if (top.key < last) outOfOrder++;
      last = top.key;
      popped.push(top.id);
    }
    expect(outOfOrder).toBe(0);
    expect(popped.sort((a, b) => a - b)).toEqual(items.map((i) => i.id).filter((id) => id % 10 !== 0));
  });
});

describe('Fifo', () => {
  it('keeps order across compactions, as an array would', () => {
    fc.assert(fc.property(fc.array(fc.oneof(fc.nat(), fc.constant(-1), fc.constant(-2)), { maxLength: 5000 }), (list) => {
      const q = new Fifo<number>();
      const model: number[] = [];
      for (const v of list) {
        if (v === -1) expect(q.shift()).toBe(model.shift());
        else if (v === -2) {
          const seen: number[] = [];
          q.clear((x) => seen.push(x));
          expect(seen).toEqual(model.splice(0));
        } else {
          q.push(v);
          model.push(v);
        }
        expect(q.length).toBe(model.length);
      }
    }), { numRuns: 200 });
  });

  it('a long run of pushes then shifts (the compaction path) gives every item once, in order', () => {
    const q = new Fifo<number>();
    for (let i = 0; i < 50_000; i++) q.push(i);
    const out: (number | undefined)[] = [];
    for (let i = 0; i < 50_000; i++) {
      out.push(q.shift());
      if (i % 3 === 0) q.push(50_000 + i);
    }
    for (let v = q.shift(); v !== undefined; v = q.shift()) out.push(v);
    const expected = [...Array.from({ length: 50_000 }, (_, i) => i), ...Array.from({ length: 16_667 }, (_, k) => 50_000 + k * 3)];
    expect(out).toEqual(expected);
    expect(q.length).toBe(0);
  });
});
