// The label sets (label + unit) a check's perfdata caps hold
// (perfdata-limit.ts), kept small: most checks hold a handful.

/**
 * A check's label sets while it holds at most 16: one string of
 * `<key length>;<key>` tokens, searched from the start (a KeySet of a grown
 * array, with each key a string of its own, was ~350 B per check with five
 * sets: 35 MB at 100,000 checks); a Set beyond that.
 */
export type Keys = string | Set<string>;

export const FEW = 16;

/** The length of the key whose token starts at `i`, set by keyAt(). */
let keyLength = 0;

/** Where the key of the token at `i` starts (-1: none); its length goes to keyLength. */
function keyAt(keys: string, i: number): number {
  // The digits hold no ';': the first one from i ends them.
  const semi = keys.indexOf(';', i);
  if (semi < 0) return -1;
  let len = 0;
  for (let j = i; j < semi; j++) len = len * 10 + keys.charCodeAt(j) - 48;
  keyLength = len;
  return semi + 1;
}

export function keysHas(keys: Keys, key: string): boolean {
  if (typeof keys !== 'string') return keys.has(key);
  for (let i = keyAt(keys, 0); i >= 0; i = keyAt(keys, i + keyLength)) {
    if (keyLength === key.length && keys.startsWith(key, i)) return true;
  }
  return false;
}

export function* keysOf(keys: Keys): Generator<string> {
  if (typeof keys !== 'string') {
    yield* keys;
    return;
  }
  for (let i = keyAt(keys, 0); i >= 0;) {
    // Read before the yield: whoever iterates may call keyAt() meanwhile.
    const end = i + keyLength;
    yield keys.slice(i, end);
    i = keyAt(keys, end);
  }
}

/** Keys with `key` added; `held`: how many it has. */
export function keysAdd(keys: Keys, held: number, key: string): Keys {
  if (typeof keys !== 'string') return keys.add(key);
  // Joined, not concatenated: `+` makes a rope of the string, three more objects per check.
  if (held < FEW) return [keys, key.length, ';', key].join('');
  return new Set(keysOf(keys)).add(key);
}

/**
 * Keys without the last `n` added (of `held`): what an admission that is
 * taken back had added. Sets keep their order of insertion, as the string
 * keeps its tokens.
 */
export function keysDropLast(keys: Keys, held: number, n: number): Keys {
  if (n <= 0) return keys;
  if (typeof keys !== 'string') {
    let i = 0;
    for (const k of keys) if (i++ >= held - n) keys.delete(k);
    if (held - n > FEW) return keys;
    // Few enough again for the string (a churning check taken back under 16 kept a Set: outside review).
    const parts: Array<string | number> = [];
    for (const k of keys) parts.push(k.length, ';', k);
    return parts.join('');
  }
  // Where the token of the first key dropped starts: where the key before it ends.
  let tokenStart = 0;
  for (let left = held - n; left > 0; left--) {
    const i = keyAt(keys, tokenStart);
    if (i < 0) return keys;
    tokenStart = i + keyLength;
  }
  return keys.slice(0, tokenStart);
}

/**
 * A label set's key: the label's length first, so that no two sets share one
 * (JSON.stringify of the pair cost ~0.4 µs an item, and escapes made keys of
 * odd labels up to six times their length).
 */
export function labelKey(label: string, uom: string): string {
  return `${label.length}:${label}${uom}`;
}
