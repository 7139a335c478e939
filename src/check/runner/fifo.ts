// A first-in first-out queue with O(1) push and shift (amortized): the
// runner's queue of due checks waiting for a free slot. Array.prototype.shift
// moves every element, so a queue of 100,000 due checks cost O(n) per start.
export class Fifo<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    // Drop the consumed front once it is most of the array (keeps memory to what is queued).
    if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  /** Empties the queue, calling `each` on what was in it. */
  clear(each?: (item: T) => void): void {
    if (each !== undefined) for (let i = this.#head; i < this.#items.length; i++) each(this.#items[i]!);
    this.#items = [];
    this.#head = 0;
  }
}
