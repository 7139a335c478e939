// PerfdataLimit on its own: which items a check's results expose and what
// is counted as left out, read through the same FakeSource the metrics
// suites use. The label sets of a check are kept as one string of
// length-prefixed keys up to 16 and as a Set beyond (issue 19: ~350 B per
// check less than an array of key strings).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keysAdd, keysDropLast, keysHas, keysOf, labelKey, type Keys } from '../../src/metrics/model/perfdata-keys';
import { PerfdataLimit } from '../../src/metrics/model/perfdata-limit';
import type { PerfDatum } from '../../src/check/plugin/perfdata';
import { FakeSource } from './metrics-source';

// A real gc() without --expose-gc on the command line (vitest starts the workers).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const items = (...labels: string[]): PerfDatum[] => labels.map((label, i) => ({ label, value: i, uom: '' }));

function reader(limit: PerfdataLimit, src: FakeSource, id: string) {
  return () => {
    const status = src.checkStatus().find((s) => s.id === id)!;
    const v = limit.readItems(status);
    return { labels: v.items.map((p) => p.label), labelSets: v.labelSets, dropped: { ...v.dropped } };
  };
}

describe('perfdata label-set keys', () => {
  it('add, look up and drop the last n as a list would, across 16 (string ↔ Set), with digits, ";", ":" and any code unit in labels', () => {
    const label = fc.oneof(fc.string({ maxLength: 10 }), fc.string({ unit: fc.constantFrom('1', ';', ':', '0', 'é', '😀', '\uD800'), maxLength: 10 }));
    const op = fc.oneof(fc.record({ add: fc.tuple(label, fc.constantFrom('', 's', '1;', ':')) }), fc.record({ drop: fc.nat(30) }));
    fc.assert(fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
      let keys: Keys = '';
      const list: string[] = [];
      for (const o of ops) {
        if ('add' in o) {
          const k = labelKey(o.add[0], o.add[1]);
          expect(keysHas(keys, k)).toBe(list.includes(k));
          if (list.includes(k)) continue;
          keys = keysAdd(keys, list.length, k);
          list.push(k);
        } else {
          const n = Math.min(o.drop, list.length);
          keys = keysDropLast(keys, list.length, n);
          list.length -= n;
        }
        expect([...keysOf(keys)]).toEqual(list);
        // The compact string while 16 or fewer are held, a Set past that.
        expect(typeof keys === 'string').toBe(list.length <= 16);
      }
    }), { numRuns: 1000 });
  });
});

describe('PerfdataLimit', () => {
  it('holds 40 label sets across the change from the string to a Set: none dropped, none counted twice', () => {
    const src = new FakeSource();
    src.define('c');
    const limit = new PerfdataLimit(100);
    const read = reader(limit, src, 'c');
    const labels = Array.from({ length: 40 }, (_, i) => `m${i}`);
    for (let n = 1; n <= 40; n++) {
      // Each result repeats every label so far, and one new one.
      src.result('c', 0, items(...labels.slice(0, n)));
      expect(read()).toEqual({ labels: labels.slice(0, n), labelSets: n, dropped: { limit: 0, duplicate: 0, tooLong: 0 } });
    }
    expect(limit.heldLabelChars()).toBe(labels.reduce((s, l) => s + `${l.length}:${l}`.length, 0));
  });

  it('a key that holds ";" or digits, or that another key starts or ends with, is told apart from it', () => {
    const src = new FakeSource();
    src.define('c');
    const limit = new PerfdataLimit(3);
    const read = reader(limit, src, 'c');
    src.result('c', 0, items('a;1', '1;a', ';'));
    expect(read()).toEqual({ labels: ['a;1', '1;a', ';'], labelSets: 3, dropped: { limit: 0, duplicate: 0, tooLong: 0 } });
    src.result('c', 0, items(';', 'a;1', '1;a'));
    expect(read().dropped).toEqual({ limit: 0, duplicate: 0, tooLong: 0 });
    // Prefixes and suffixes of held keys are new label sets: the cap (3) leaves them out.
    src.result('c', 0, items('a', '1', 'a;', ';a', '1;a'));
    expect(read()).toEqual({ labels: ['1;a'], labelSets: 3, dropped: { limit: 4, duplicate: 0, tooLong: 0 } });
  });

  it('within one result, a repeat of an item left out by the cap counts as a duplicate, as a repeat of a kept one does', () => {
    const src = new FakeSource();
    src.define('c');
    const limit = new PerfdataLimit(2);
    const read = reader(limit, src, 'c');
    src.result('c', 0, items('a', 'b', 'c', 'c', 'a'));
    expect(read()).toEqual({ labels: ['a', 'b'], labelSets: 2, dropped: { limit: 1, duplicate: 2, tooLong: 0 } });
    // The same result read again is not admitted again.
    expect(read().dropped).toEqual({ limit: 1, duplicate: 2, tooLong: 0 });
    // Over 16 items in one result: duplicates found the same way.
    const many = Array.from({ length: 20 }, (_, i) => `x${i % 10}`);
    src.result('c', 0, items('a', ...many));
    expect(read()).toEqual({ labels: ['a'], labelSets: 2, dropped: { limit: 11, duplicate: 12, tooLong: 0 } });
  });

  it('a check with nothing left out shares one frozen dropped record; a drop gives it its own', () => {
    const src = new FakeSource();
    src.define('p');
    src.define('q');
    const limit = new PerfdataLimit(1);
    src.result('p', 0, items('a'));
    src.result('q', 0, items('a'));
    const p = limit.readItems(src.checkStatus()[0]);
    const q = limit.readItems(src.checkStatus()[1]);
    expect(p.dropped).toBe(q.dropped);
    src.result('q', 0, items('a', 'b'));
    const q2 = limit.readItems(src.checkStatus()[1]);
    expect(q2.dropped).toEqual({ limit: 1, duplicate: 0, tooLong: 0 });
    expect(p.dropped).toEqual({ limit: 0, duplicate: 0, tooLong: 0 });
  });

  it('a result that goes back to null lets go of its items (outside review: the cached items kept them alive)', async () => {
    const src = new FakeSource();
    src.define('c');
    const limit = new PerfdataLimit(100);
    const read = reader(limit, src, 'c');
    // Made in a function: no local of this test holds the items.
    const ref = ((perfdata: PerfDatum[]) => {
      src.result('c', 0, perfdata);
      return new WeakRef(perfdata);
    })(items('a', 'b'));
    expect(read().labels).toEqual(['a', 'b']);
    // The same definition, no result any more (a source of its own may do so).
    src.checks.get('c')!.last = null;
    expect(read()).toEqual({ labels: [], labelSets: 2, dropped: { limit: 0, duplicate: 0, tooLong: 0 } });
    for (let i = 0; i < 5 && ref.deref() !== undefined; i++) {
      await new Promise((r) => setTimeout(r, 10));
      gc();
    }
    expect(ref.deref()).toBeUndefined();
    // And the next result is admitted as any other.
    src.result('c', 0, items('a', 'c'));
    expect(read()).toEqual({ labels: ['a', 'c'], labelSets: 3, dropped: { limit: 0, duplicate: 0, tooLong: 0 } });
  });
});
