// ScrapeText: a scrape's repeated pieces as one run of UTF-8 bytes kept in
// fixed segments (src/check/scrape-text.ts). Every piece must come back
// byte for byte, also where it runs across segments or the offsets' chunks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ScrapeText } from '../src/check/scrape-text';

const SEG = 256 * 1024;

function check(pieces: string[]): void {
  const t = new ScrapeText();
  const ks = pieces.map((p) => t.add(p));
  expect(ks).toEqual(pieces.map((_, i) => i));
  const to = Buffer.alloc(pieces.reduce((m, p) => Math.max(m, 3 * p.length), 0) + 8);
  for (let k = 0; k < pieces.length; k++) {
    const want = Buffer.from(pieces[k], 'utf8');
    expect(t.bytes(k), `piece ${k}`).toBe(want.length);
    to.fill(0x2a);
    expect(t.copy(k, to, 3)).toBe(want.length);
    if (!to.subarray(3, 3 + want.length).equals(want)) expect.fail(`piece ${k} of ${pieces.length} differs`);
    // Nothing written past it.
    expect(to[3 + want.length]).toBe(0x2a);
  }
}

describe('ScrapeText', () => {
  it('pieces across segment ends: ASCII, 2-, 3- and 4-byte characters and a lone surrogate at the boundary', () => {
    const pieces: string[] = [];
    // Fill the first segment to 5 bytes short of its end, then pieces that straddle it.
    pieces.push('x'.repeat(SEG - 5));
    pieces.push('ab€😀\ud800c');
    pieces.push('after');
    // One piece longer than a segment, then one ending exactly on the next boundary.
    pieces.push('é'.repeat(SEG));
    check(pieces);
  });

  it('a piece that fills a segment exactly, and one that starts on the boundary', () => {
    check(['y'.repeat(SEG), 'z', 'w'.repeat(SEG - 1), 'v']);
  });

  it('more pieces than one chunk of offsets holds (65,536), over several segments', () => {
    const pieces = Array.from({ length: 140_000 }, (_, i) => `{check="c${i}"`);
    check(pieces);
  });

  it('random pieces of any text come back as their UTF-8', () => {
    const piece = fc.oneof(
      { weight: 8, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 20_000, maxLength: 120_000 }) },
    );
    fc.assert(fc.property(fc.array(piece, { minLength: 1, maxLength: 400 }), (pieces) => check(pieces)), { numRuns: 40, seed: 19 });
  });
});
