// The hash a reload keys each check by (checks-digest.ts): equal for equal
// JSON texts, different for different ones, and NaN (compared in full) where
// the text could hide a difference.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CheckDefinition } from '../../src/check/runner/runner';
import { definitionHash, textHash } from '../../src/config/checks-digest';

const asDef = (x: object) => x as unknown as CheckDefinition;

describe('definitionHash', () => {
  it('equal for equal texts, different for different ones, an integer of at most 53 bits', () => {
    // Strings of the code units JSON escapes and that spell a null, so that one may look like a null value.
    const tricky = fc.array(fc.constantFrom('"', '\\', 'null', 'n', ':', ',', '[', '{', 'x'), { maxLength: 8 }).map((a) => a.join(''));
    // Definitions as a file gives them: strings (any code units), finite numbers, booleans, arrays, nested
    // objects; and now and then a value JSON writes as null (null, NaN, ±Infinity).
    const value = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: 'small' }, fc.string({ unit: 'binary' }), tricky, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean(),
        fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(fc.oneof(fc.string(), tricky), tie('v'), { maxKeys: 3 }),
        fc.constantFrom(null, NaN, Infinity, -Infinity)),
    })).v;
    const def = fc.dictionary(fc.string(), value, { maxKeys: 6 });
    // Pairs that differ by little: a copy with one value changed, or one key more.
    // One in ten a string value with a null in its text.
    const pair = fc.oneof(fc.tuple(def, def), fc.tuple(def, def).map(([a, b]) => [{ ...a, s: 'x:null' }, b] as const), def.chain((d) => fc.tuple(fc.constant(d), fc.tuple(fc.string(), value).map(([k, v]) => ({ ...d, [k]: v })))));
    // Whether JSON writes a null for the value or any value inside it.
    const holdsNull = (v: unknown): boolean =>
      v === null || (typeof v === 'number' && !Number.isFinite(v)) || (typeof v === 'object' && Object.values(v).some(holdsNull));
    let nulls = 0;
    let texts = 0;
    fc.assert(fc.property(pair, ([a, b]) => {
      const [ha, hb] = [definitionHash(asDef(a)), definitionHash(asDef(b))];
      for (const [h, d] of [[ha, a], [hb, b]] as const) {
        // NaN exactly where JSON writes a null: not for a string that only spells one.
        expect(Number.isNaN(h)).toBe(holdsNull(d));
        if (holdsNull(d)) nulls++;
        else {
          if (JSON.stringify(d).includes('null')) texts++;
          expect(Number.isSafeInteger(h)).toBe(true);
          expect(h).toBeGreaterThanOrEqual(0);
        }
      }
      if (!Number.isNaN(ha) && !Number.isNaN(hb)) expect(ha === hb).toBe(JSON.stringify(a) === JSON.stringify(b));
    }), { numRuns: 2000 });
    // Both kinds came up often enough to mean something.
    expect(nulls).toBeGreaterThan(100);
    expect(texts).toBeGreaterThan(100);
  });

  it('one code unit changed anywhere in 100,000 definitions of one shape: 100,000 hashes, all different', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 100_000; i++) {
      seen.add(definitionHash(asDef({ id: `svc-${i % 1000}`, command: ['/usr/lib/nagios/plugins/check_dummy', '0', `OK ${Math.floor(i / 1000)}`], interval: 60_000 })));
    }
    expect(seen.size).toBe(100_000);
  });

  it('both lanes tell apart texts that swap "Aa" for "BB" (which a sum times 31 cannot): 4,096 such texts, 4,096 hashes', () => {
    // 12 places, "Aa" or "BB" in each: the same sum times 31 for all 4,096, so only FNV-1a told them apart before.
    const texts = Array.from({ length: 4096 }, (_, k) => Array.from({ length: 12 }, (_, j) => ((k >> j) & 1 ? 'BB' : 'Aa')).join(''));
    const hashes = texts.map((t) => textHash(t));
    expect(new Set(hashes).size).toBe(4096);
    // The 21-bit lane on its own: about as many values as a random one gives (4,096 in 2^21: ~4 alike).
    expect(new Set(hashes.map((h) => h % 2 ** 21)).size).toBeGreaterThan(4080);
  });

  it('NaN (never equal: compared in full) where JSON would write null: NaN, ±Infinity, and null itself', () => {
    for (const x of [NaN, Infinity, -Infinity, null, [1, null], { a: null }]) expect(definitionHash(asDef({ id: 'a', x }))).toBeNaN();
    // A string that spells one, even after an escaped quote or backslash, is a string; a key too.
    for (const command of ['x >/dev/null,null', 'x >/dev/null', 'a:null', '[null]', '\\",null', '\\\\', '"null"']) {
      expect(definitionHash(asDef({ id: 'a', command }))).not.toBeNaN();
    }
    expect(definitionHash(asDef({ id: 'a', null: 1, n: 'null' }))).not.toBeNaN();
    // A null value after such strings is still one.
    expect(definitionHash(asDef({ id: 'a\\"', command: '\\', x: [null] }))).toBeNaN();
    // Left out, as sameDefinition leaves it out.
    expect(definitionHash(asDef({ id: 'a', x: undefined }))).toBe(definitionHash(asDef({ id: 'a' })));
  });
});
