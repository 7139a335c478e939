// ScrapeText: the text a scrape's lines repeat, as UTF-8 pieces. Its storage
// goes to the next scrape when one ends (issue 19: made anew each scrape,
// it kept RSS growing through malloc), so a later scrape must see none of
// an earlier one's bytes or pieces.
import { describe, expect, it } from 'vitest';
import { ScrapeText } from '../src/check/scrape-text';

function piece(t: ScrapeText, k: number): string {
  const to = Buffer.alloc(t.bytes(k));
  t.copy(k, to, 0);
  return to.toString('utf8');
}

describe('ScrapeText', () => {
  it('pieces of any length and script come back byte for byte, past its first buffer', () => {
    const t = new ScrapeText();
    const texts = Array.from({ length: 5000 }, (_, i) => `{check="c${i}\u00e9\u{1F600}${'x'.repeat(i % 97)}"`);
    const ks = texts.map((s) => t.add(s));
    expect(ks).toEqual(texts.map((_, i) => i));
    for (const k of [0, 1, 63, 64, 4095, 4096, 4999]) expect(piece(t, k)).toBe(texts[k]);
    t.release();
  });

  it('the storage released by one scrape serves the next with none of its pieces or bytes', () => {
    const first = new ScrapeText();
    for (let i = 0; i < 20_000; i++) first.add(`,label="old${i}",uom="B"`);
    first.release();
    // Released twice: nothing changes, nothing is handed out twice.
    first.release();
    const a = new ScrapeText();
    const b = new ScrapeText();
    expect(a.add('{check="new"')).toBe(0);
    expect(b.add('{check="other"')).toBe(0);
    expect(a.add('')).toBe(1);
    expect(piece(a, 0)).toBe('{check="new"');
    expect(a.bytes(1)).toBe(0);
    expect(piece(b, 0)).toBe('{check="other"');
    a.release();
    b.release();
  });
});
