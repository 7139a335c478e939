// A count and its noun in a message: `1 check`, `2 checks` (an operator reads
// "1 results" as a bug, and rightly).

/** `n noun`, the noun in the plural unless n is 1. */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
