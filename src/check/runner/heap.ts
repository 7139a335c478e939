// An indexed binary min-heap keyed by a number: the scheduler's "what is due
// next". Each item carries its own position (`heapIndex`, -1 when not in the
// heap), so removing any item is O(log n) like push and pop. Removing checks
// used to filter the whole heap: ~15 ms per check at 100,000 checks, so a
// reload that replaced a tenth of them took minutes (issue 19).

/** What the heap needs of an item: a slot for its position. */
export interface HeapItem {
  heapIndex: number;
}

export class MinHeap<T extends HeapItem> {
  readonly #items: T[] = [];
  readonly #key: (item: T) => number;

  constructor(key: (item: T) => number) {
    this.#key = key;
  }

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  /** Adds `item`, which must not be in a heap already. */
  push(item: T): void {
    if (item.heapIndex !== -1) throw new Error('MinHeap.push: the item is in a heap already');
    const a = this.#items;
    item.heapIndex = a.length;
    a.push(item);
    this.#up(item.heapIndex);
  }

  pop(): T | undefined {
    const top = this.#items[0];
    if (top !== undefined) this.delete(top);
    return top;
  }

  /** Takes `item` out; false if it was not in this heap. */
  delete(item: T): boolean {
    const a = this.#items;
    const i = item.heapIndex;
    if (i < 0 || i >= a.length || a[i] !== item) return false;
    item.heapIndex = -1;
    const last = a.pop()!;
    if (i < a.length) {
      a[i] = last;
      last.heapIndex = i;
      // The moved item may belong above or below its new place.
      if (i > 0 && this.#key(last) < this.#key(a[(i - 1) >> 1])) this.#up(i);
      else this.#down(i);
    }
    return true;
  }

  #up(i: number): void {
    const a = this.#items;
    const item = a[i];
    const k = this.#key(item);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = a[parent];
      if (this.#key(p) <= k) break;
      a[i] = p;
      p.heapIndex = i;
      i = parent;
    }
    a[i] = item;
    item.heapIndex = i;
  }

  #down(i: number): void {
    const a = this.#items;
    const n = a.length;
    const item = a[i];
    const k = this.#key(item);
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const m = r < n && this.#key(a[r]) < this.#key(a[l]) ? r : l;
      if (this.#key(a[m]) >= k) break;
      a[i] = a[m];
      a[i].heapIndex = i;
      i = m;
    }
    a[i] = item;
    item.heapIndex = i;
  }
}
