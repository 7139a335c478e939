// What a reload of `noshell run` compares before it asks for definitions:
// each check's id, a hash of its definition, and its (user, group) pair.
// The loading thread makes the digest and sends it; the event-loop thread
// then asks only for the definitions whose hash (or whose pair's identity)
// differs from the applied one's, so a reload of 100,000 checks with 1 %
// changed copies 1,000 definitions across threads, not 100,000.
import type { CheckDefinition } from '../check/runner/runner';
import type { FileCheck } from './checks-file-shape';

export interface UserGroup {
  user: string | undefined;
  group: string | undefined;
}

export interface ChecksDigest {
  /** In file order. */
  ids: string[];
  /** Per check: definitionHash() of its definition. */
  hashes: Float64Array;
  /** Each distinct (user, group) pair, in the order first seen. */
  pairs: UserGroup[];
  /** Per check: its pair's index in `pairs`. */
  pairOf: Uint32Array;
}

const TWO_21 = 2 ** 21;

/**
 * A 53-bit hash of the definition's JSON text (keys in their order), or
 * NaN where that text could hide a difference: JSON writes NaN and ±Infinity
 * as null, so a text with a null in it is always compared in full (NaN is
 * equal to nothing). Undefined values are left out, as sameDefinition()
 * leaves them out. Equal hashes stand for equal definitions; a file's author
 * who made two collide would only keep a check they changed as it was.
 */
export function definitionHash(def: CheckDefinition): number {
  return textHash(JSON.stringify(def));
}

/**
 * Whether JSON text holds a null value: an `n` outside its strings (the
 * only other words, true and false, have none). A null in a string's text
 * (`2>/dev/null`, a macro `a,null`) is not one: it hides no difference, and
 * taken for one it made every reload validate the check again (or, in a
 * file's `defaults` or `macros`, every check of the file).
 */
function holdsNull(text: string): boolean {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      // A backslash escapes the next code unit (an escaped quote does not end the string).
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x6e) return true;
  }
  return false;
}

/**
 * definitionHash() of a JSON text (JSON.stringify's): NaN where it holds a
 * null value (holdsNull). Two lanes over its UTF-16 code units, FNV-1a (32
 * bits) and a multiply-xorshift lane finished by Murmur3's mixer (21 bits):
 * 0.5–0.8 µs for a 100-character text. Not made
 * to withstand a search for collisions (an earlier second lane, a sum times
 * 31, made them by swapping "Aa" for "BB"); a load that relies on one checks
 * what it can (checks-file-load.ts).
 */
export function textHash(text: string): number {
  if (text.includes('null') && holdsNull(text)) return NaN;
  let a = 0x811c9dc5;
  let b = 0x9e3779b9;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 16777619);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  b = Math.imul(b ^ (b >>> 16), 0x85ebca6b);
  b = Math.imul(b ^ (b >>> 13), 0xc2b2ae35);
  b ^= b >>> 16;
  return (a >>> 0) * TWO_21 + ((b >>> 0) % TWO_21);
}

/** Each distinct (user, group) pair in the order first seen, and each check's pair's index. */
export function pairsOf(users: readonly (string | undefined)[], groups: readonly (string | undefined)[]): Pick<ChecksDigest, 'pairs' | 'pairOf'> {
  const pairOf = new Uint32Array(users.length);
  const pairs: UserGroup[] = [];
  const index = new Map<string, number>();
  for (let i = 0; i < users.length; i++) {
    const user = users[i];
    const group = groups[i];
    const key = `${user ?? ''}\0${group ?? ''}`;
    let p = index.get(key);
    if (p === undefined) {
      p = pairs.length;
      index.set(key, p);
      pairs.push({ user, group });
    }
    pairOf[i] = p;
  }
  return { pairs, pairOf };
}

/** The digest of checks already expanded (the loading thread makes its own as it loads: checks-file-load.ts). */
export function digestChecks(checks: readonly FileCheck[]): ChecksDigest {
  const ids = checks.map((c) => c.definition.id);
  const hashes = Float64Array.from(checks, (c) => definitionHash(c.definition));
  const { pairs, pairOf } = pairsOf(checks.map((c) => c.user), checks.map((c) => c.group));
  return { ids, hashes, pairs, pairOf };
}

/** Why `want` is not a list of indexes of `n` checks, ascending, each once; null when it is. */
export function badIndexes(want: Uint32Array, n: number): string | null {
  for (let i = 0; i < want.length; i++) {
    if (want[i] >= n || (i > 0 && want[i] <= want[i - 1])) return `fetch: bad index ${want[i]} at ${i} (of ${n} checks, ascending)`;
  }
  return null;
}
