// ScrapeText: a scrape's repeated pieces as one run of UTF-8 bytes kept in
// fixed segments (src/check/scrape-text.ts). Every piece must come back
// byte for byte, also where it runs across segments or the offsets' chunks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineBytes } from '../src/check/line-bytes';
import { escapeLabelValue, num } from '../src/check/metrics-text';
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
      const to = Buffer.alloc(3 * want.reduce((m, p) => Math.max(m, p.length), 0));
      for (let k = 0; k < want.length; k++) {
        const w = Buffer.from(want[k], 'utf8');
        const n = t.copy(k, to, 0);
        if (n !== w.length || !to.subarray(0, n).equals(w)) expect.fail(`piece ${k} differs`);
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
    const to = Buffer.alloc(64);
    const got = [0, 1, 2, 3].map((k) => to.toString('utf8', 0, t.copy(k, to, 0)));
    expect(got).toEqual(['123', 'o\\"bj', 'null', 'undefined']);
  });
});

describe('LineBytes', () => {
  const text = (chunks: Buffer[]) => Buffer.concat(chunks).toString('latin1');

  it('writes every number as num() does: whole ones digit by digit (safe integers, either sign), others as String gives them', () => {
    const edge = [0, -0, 1, 1023, 1024, -1, -1024, 2 ** 31, 2 ** 32 + 1, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 53, -(2 ** 53), 1e21, 1e-7, 0.1, NaN, Infinity, -Infinity, Number.MIN_VALUE, -Number.MAX_VALUE, 1764770000.123];
    const v = fc.oneof(fc.double(), fc.integer(), fc.maxSafeInteger(), fc.constantFrom(...edge));
    fc.assert(fc.property(fc.array(v, { maxLength: 50 }), (vs) => {
      const out = new LineBytes(64);
      for (const x of vs) {
        out.num(x);
        out.byte(0x0a);
      }
      expect(text(out.take(true))).toBe(vs.map((x) => `${num(x)}\n`).join(''));
    }), { numRuns: 300, seed: 12 });
  });

  it('a whole line is its pieces, the labels, the value and a line feed, never split between chunks', () => {
    const t = new ScrapeText();
    const id = t.add('{check="c1"');
    const item = t.add(',label="l",uom="s"');
    const out = new LineBytes(48);
    const name = Buffer.from('noshell_check_perfdata');
    const more = Buffer.from(',alert="inside",bound="low"');
    out.line(name, t, id, -1, null, 3);
    out.line(name, t, id, item, null, 1 - 2 ** 53);
    out.line(name, t, id, item, more, 0.25);
    const chunks = out.take(true);
    const lines = ['noshell_check_perfdata{check="c1"} 3\n', 'noshell_check_perfdata{check="c1",label="l",uom="s"} -9007199254740991\n', 'noshell_check_perfdata{check="c1",label="l",uom="s",alert="inside",bound="low"} 0.25\n'];
    expect(text(chunks)).toBe(lines.join(''));
    // Each chunk ends at a line's end: no line is split (a chunk of 48 bytes holds none of these whole, so each line is a chunk).
    expect(chunks.map((c) => c.toString('latin1'))).toEqual(lines);
  });
});
