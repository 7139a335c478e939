// escapeControls (src/util/control-chars.ts): what a terminal would act on, or hide
// a forged line behind, comes out escaped; everything else as it was.
import { describe, expect, it } from 'vitest';
import { escapeControls } from '../../src/util/control-chars';

describe('escapeControls', () => {
  it('C0, DEL and C1 as \\xNN; bidi controls (U+061C included: outside review), separators and invisible format characters as \\uNNNN', () => {
    expect(escapeControls('a\rb\x1b]0;t\x07\x7f\x9b')).toBe('a\\x0db\\x1b]0;t\\x07\\x7f\\x9b');
    expect(escapeControls('\u061c\u200e\u200f\u202a\u202e\u2066\u2069\u2028\u2029')).toBe('\\u061c\\u200e\\u200f\\u202a\\u202e\\u2066\\u2069\\u2028\\u2029');
    expect(escapeControls('x\u00ady\u200bz\u200d\u2060\u2064\ufeff\ufff9\ufffb')).toBe('x\\xady\\u200bz\\u200d\\u2060\\u2064\\ufeff\\ufff9\\ufffb');
    // Tag characters (U+E0000–E007F), astral: one escape for the pair.
    expect(escapeControls('ok\u{E0001}\u{E007F}!')).toBe('ok\\u{e0001}\\u{e007f}!');
  });

  it('leaves printable text alone, astral characters and a lone surrogate included; cuts at max with the length', () => {
    const text = 'OK - disk 95 % é ü 中文 😀 \ud83d';
    expect(escapeControls(text)).toBe(text);
    expect(escapeControls('x'.repeat(10), 4)).toBe('xxxx… (10 characters)');
  });

  it('a large hostile input (2 M controls) comes out whole, each escaped once', () => {
    const hostile = '\x1b\u202e'.repeat(1024 * 1024);
    const out = escapeControls(hostile);
    expect(out.length).toBe((hostile.length / 2) * (4 + 6));
    expect(out.slice(0, 20)).toBe('\\x1b\\u202e\\x1b\\u202e');
  });
});
