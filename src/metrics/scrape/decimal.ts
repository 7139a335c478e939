// A number as the addon writes it without its text (native/metrics/scrape-lines.h):
// most figures a scrape writes that are not whole are short decimals (0.25,
// a duration, a unit scaled by 1000), and String(v) made a string of each
// for every scrape. Whether v is one is found with a few multiplications.

/** 10^d, d = 0 … 15. */
const POW10 = Array.from({ length: 16 }, (_, d) => 10 ** d);
/** |X| of a decimal below this: X · 16 + d stays a safe integer. */
const DECIMAL_MAX = 2 ** 48;

/**
 * v as native/metrics/scrape-lines.h's decimal, sign · (X · 16 + d), if it is one:
 * the double nearest X / 10^d for an integer |X| < 2^48 and d = 1 … 15, so
 * the shortest text that reads back as v (String(v)) is X's digits with a
 * point d from the end (at most 15 digits: no two such numbers are one
 * double). Below 1e-6 String(v) has an exponent. Else (and for a whole
 * number) NaN.
 */
export function decimalOf(v: number): number {
  const a = Math.abs(v);
  if (!(a >= 1e-6) || Number.isInteger(a)) return NaN;
  for (let d = 1; d < 16; d++) {
    const x = Math.round(a * POW10[d]);
    if (x >= DECIMAL_MAX) return NaN;
    if (x / POW10[d] === a) return v < 0 ? -(x * 16 + d) : x * 16 + d;
  }
  return NaN;
}
