// The stdio arrays are views into shared off-heap blocks: V8 keeps a
// small `new Int32Array(6)` on its own heap and must move it out to a fresh
// ArrayBuffer the first time native code reads it (~2-3 % of the event
// loop's time per exec). Slots are never reused; a block lives as long as
// one of its views does (a Subprocess keeps its options: small blocks, so
// that a long-lived child pins 1.5 KiB at most).
const STDIO_BLOCK = 64; // arrays per block
let stdioBlock: ArrayBuffer | null = null;
let stdioNext = 0;
/** A zeroed Int32Array(6) for NormalizedSpawn.stdio. */
export function stdioArray(): Int32Array {
  if (stdioBlock === null || stdioNext === STDIO_BLOCK) {
    stdioBlock = new ArrayBuffer(STDIO_BLOCK * 6 * 4);
    stdioNext = 0;
  }
  return new Int32Array(stdioBlock, 6 * 4 * stdioNext++, 6);
}
