// A Map of at most `max` entries that keeps the ones used last: what the
// check runner (options objects) and the gearman worker (job timeouts) keep
// their checked exec options in, bounded because the keys come from outside.
export class LruMap<K, V> {
  readonly #map = new Map<K, V>();

  constructor(readonly max: number) {}

  get size(): number {
    return this.#map.size;
  }

  /**
   * The value kept for key, or make(key)'s, kept from then on. A hit moves its
   * key last (a Map keeps insertion order); past max, the key used longest ago
   * goes. If make throws, nothing is kept.
   */
  get(key: K, make: (key: K) => V): V {
    if (this.#map.has(key)) {
      const value = this.#map.get(key) as V;
      this.#map.delete(key);
      this.#map.set(key, value);
      return value;
    }
    const value = make(key);
    if (this.#map.size >= this.max) this.#map.delete(this.#map.keys().next().value as K);
    this.#map.set(key, value);
    return value;
  }

  clear(): void {
    this.#map.clear();
  }
}
