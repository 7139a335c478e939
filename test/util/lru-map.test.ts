// The bounded map the runner and the gearman worker keep checked options in.
import { describe, expect, it } from 'vitest';
import { LruMap } from '../../src/util/lru-map';

describe('LruMap', () => {
  it('keeps at most max entries; a hit keeps its key, the one used longest ago goes', () => {
    const m = new LruMap<string, number>(3);
    let made = 0;
    const make = (k: string) => (made++, k.length);
    for (const k of ['a', 'bb', 'ccc']) m.get(k, make);
    expect(m.get('a', make)).toBe(1); // a hit: 'a' is now the last used
    m.get('dddd', make); // full: 'bb' goes, not 'a'
    expect(m.size).toBe(3);
    expect(made).toBe(4);
    m.get('a', make);
    expect(made).toBe(4);
    m.get('bb', make);
    expect(made).toBe(5);
  });

  it('keeps a null value as a value, keeps nothing when make throws, and clears', () => {
    const m = new LruMap<number, string | null>(2);
    let made = 0;
    expect(m.get(1, () => (made++, null))).toBeNull();
    expect(m.get(1, () => (made++, 'x'))).toBeNull();
    expect(made).toBe(1);
    expect(() => m.get(2, () => { throw new TypeError('bad'); })).toThrow('bad');
    expect(m.size).toBe(1);
    m.clear();
    expect(m.size).toBe(0);
  });

  it('1,000 distinct keys through a map of 64: memory stays at 64', () => {
    const m = new LruMap<number, object>(64);
    for (let i = 0; i < 1000; i++) m.get(i, () => ({}));
    expect(m.size).toBe(64);
  });
});
