// How the loading thread of a reload (checks-file-worker.ts) cuts what it
// sends into messages: each is deserialized in one turn of the event loop
// that reads it, so each is bounded by count and by size.

/** Items per message: 1,000 checks are ~125 KB of definitions, 1-3 ms to deserialize; two may be read in one turn. */
const BATCH = 1000;
/**
 * Characters of strings per message, whatever the count: the schema does
 * not bound an id's length, and 10,000 ids of 1.6 KB in one message took
 * ~130 ms to deserialize.
 */
const BATCH_CHARS = 256 * 1024;

/** [start, end) ranges of `n` items of at most BATCH items and ~BATCH_CHARS chars (an item larger than that goes alone). */
export function* batchRanges(n: number, chars: (i: number) => number): Generator<[number, number]> {
  let start = 0;
  while (start < n) {
    let end = start;
    let total = 0;
    while (end < n && end - start < BATCH && (end === start || total + chars(end) <= BATCH_CHARS)) total += chars(end++);
    yield [start, end];
    start = end;
  }
}
