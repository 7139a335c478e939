// Whether two check definitions (or a checks file's "metrics" options) are
// the same: what a reload compares a check by.

/**
 * Whether two definitions are the same check: equal values, object keys in
 * any order, keys whose value is undefined left out (as JSON would), numbers
 * by their text (NaN is NaN, -0 is 0). Compared in place: a canonical text of
 * each definition (keys sorted) cost ~3 µs per check per reload, and kept as
 * ropes those texts were ~500 B of heap per check.
 */
export function sameDefinition(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b) return false;
  if (typeof a !== 'object' || a === null || b === null) return typeof a === 'number' && String(a) === String(b);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameDefinition(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const kx = Object.keys(x);
  const ky = Object.keys(y);
  // The same keys in the same order (a definition loaded again from the same file): value by value.
  if (kx.length === ky.length) {
    let i = 0;
    while (i < kx.length && kx[i] === ky[i]) i++;
    if (i === kx.length) {
      for (const k of kx) if (!sameDefinition(x[k], y[k])) return false;
      return true;
    }
  }
  let defined = 0;
  for (const k of kx) {
    if (x[k] === undefined) continue;
    defined++;
    if (!Object.hasOwn(y, k) || !sameDefinition(x[k], y[k])) return false;
  }
  for (const k of ky) if (y[k] !== undefined) defined--;
  return defined === 0;
}
