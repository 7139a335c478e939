// ScrapeText: a scrape's repeated pieces as one run of UTF-8 bytes kept in
// fixed segments (src/metrics/scrape/scrape-text.ts). Every piece must come back
// byte for byte, also where it runs across segments or the offsets' chunks,
// read as the addon reads them (its segments and its ends).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeLabelValue } from '../../src/metrics/text/metrics-text';
import { ScrapeText } from '../../src/metrics/scrape/scrape-text';

const SEG = 256 * 1024;

/** Piece k's bytes, read from the segments where ends say it is (as native/metrics/scrape-lines.c does). */
function pieceOf(t: ScrapeText, k: number): Buffer {
  const end = (i: number) => t.endChunks[i >>> 16][i & 0xffff];
  const last = end(k);
  const parts: Buffer[] = [];
  for (let p = k === 0 ? 0 : end(k - 1); p < last;) {
    const o = p & (SEG - 1);
    const n = Math.min(SEG - o, last - p);
    parts.push(t.segments[Math.floor(p / SEG)].subarray(o, o + n));
    p += n;
  }
  return Buffer.concat(parts);
}

function check(pieces: string[]): void {
  const t = new ScrapeText();
  const ks = pieces.map((p) => t.add(p));
  expect(ks).toEqual(pieces.map((_, i) => i));
  expect(t.count).toBe(pieces.length);
  for (let k = 0; k < pieces.length; k++) {
    if (!pieceOf(t, k).equals(Buffer.from(pieces[k], 'utf8'))) expect.fail(`piece ${k} of ${pieces.length} differs`);
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

  it('pieces made of bytes and escaped label values equal the escaped text, also across segment ends and past one segment', () => {
    const OPEN = Buffer.from(',label="');
    const part = fc.oneof(
      { weight: 8, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
      { weight: 4, arbitrary: fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', 'é', '😀', '\ud800'), maxLength: 30 }) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 90_000, maxLength: 200_000 }) },
    );
    fc.assert(fc.property(fc.nat(40), fc.array(fc.tuple(part, part), { minLength: 1, maxLength: 60 }), (short, parts) => {
      const t = new ScrapeText();
      // The pieces start a few bytes before the first segment's end.
      const filler = 'f'.repeat(SEG - short);
      const want = [filler];
      expect(t.add(filler)).toBe(0);
      for (const [a, b] of parts) {
        t.ascii(OPEN);
        t.escaped(a);
        t.ascii(OPEN);
        t.escaped(b);
        expect(t.end()).toBe(want.length);
        want.push(`,label="${escapeLabelValue(a)},label="${escapeLabelValue(b)}`);
      }
      for (let k = 0; k < want.length; k++) {
        if (!pieceOf(t, k).equals(Buffer.from(want[k], 'utf8'))) expect.fail(`piece ${k} differs`);
      }
    }), { numRuns: 60, seed: 12 });
  });
});

describe('ScrapeText.escaped with what is not a string', () => {
  it('writes its text, as a template string did (a source in plain JavaScript may give a number or an object as an id)', () => {
    const t = new ScrapeText();
    for (const v of [123, { toString: () => 'o"bj' }, null, undefined]) {
      t.escaped(v as unknown as string);
      t.end();
    }
    const got = [0, 1, 2, 3].map((k) => pieceOf(t, k).toString('utf8'));
    expect(got).toEqual(['123', 'o\\"bj', 'null', 'undefined']);
  });
});

describe('ScrapeText.number', () => {
  it('adds a number\'s text as a piece of its own, also across a segment\'s end', () => {
    fc.assert(fc.property(fc.nat(30), fc.array(fc.double(), { minLength: 1, maxLength: 40 }), (short, vs) => {
      const t = new ScrapeText();
      t.add('f'.repeat(SEG - short));
      const ks = vs.map((v) => t.number(String(v)));
      expect(ks).toEqual(vs.map((_, i) => i + 1));
      for (let i = 0; i < vs.length; i++) expect(pieceOf(t, ks[i]).toString('latin1')).toBe(String(vs[i]));
    }), { numRuns: 100, seed: 5 });
  });
});
