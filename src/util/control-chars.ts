// Text from a plugin or a peer, shown to a person: on a terminal a raw \r
// overprints a CRITICAL line with a forged OK one, ESC[2J clears the screen,
// an OSC sequence retitles the window, a bidi override reverses what is read.
// One escaper for every human-facing sink (the worker's log, `noshell run
// --format text`); machine-facing output (JSON lines, a plugin line handed on
// to Nagios) is left as it is.

/**
 * U+2028/2029 (line breaks to some readers), the bidi controls that reorder
 * what a terminal shows (U+061C, U+200E/200F, U+202A–202E, U+2066–2069), and
 * the invisible format characters a forged line hides behind: soft hyphen,
 * zero-width space/joiners, word joiner and invisible operators, BOM, the
 * interlinear annotation marks.
 */
function isBidiOrInvisible(c: number): boolean {
  return c === 0x2028 || c === 0x2029 || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c === 0x200e || c === 0x200f
    || c === 0x061c || c === 0x00ad || (c >= 0x200b && c <= 0x200d) || (c >= 0x2060 && c <= 0x2064) || c === 0xfeff
    || (c >= 0xfff9 && c <= 0xfffb);
}

/** A tag character (U+E0000–E007F) at `i`: invisible, spelled as a surrogate pair (U+DB40, U+DC00–DC7F). */
function isTagAt(text: string, i: number): boolean {
  if (text.charCodeAt(i) !== 0xdb40) return false;
  const low = text.charCodeAt(i + 1);
  return low >= 0xdc00 && low <= 0xdc7f;
}

/**
 * `text` as one line a terminal shows as it is: control characters (C0, DEL,
 * C1) written as \xNN, line separators, bidi controls and invisible format
 * characters as \uNNNN (tag characters as \u{e00NN}), and the
 * text cut to `max` characters (with how long it was). One scan; the text is
 * returned as it is when clean.
 */
export function escapeControls(text: string, max = Infinity): string {
  const kept = text.length > max ? text.slice(0, max) : text;
  let out = '';
  let from = 0;
  for (let i = 0; i < kept.length; i++) {
    const c = kept.charCodeAt(i);
    if (isTagAt(kept, i)) {
      out += `${kept.slice(from, i)}\\u{${(0xe0000 + kept.charCodeAt(i + 1) - 0xdc00).toString(16)}}`;
      from = ++i + 1;
      continue;
    }
    if (c >= 0x20 && c !== 0x7f && !(c >= 0x80 && c <= 0x9f) && !isBidiOrInvisible(c)) continue;
    out += `${kept.slice(from, i)}${c < 0x100 ? `\\x${c.toString(16).padStart(2, '0')}` : `\\u${c.toString(16).padStart(4, '0')}`}`;
    from = i + 1;
  }
  out = from === 0 ? kept : out + kept.slice(from);
  return text.length > max ? `${out}… (${text.length} characters)` : out;
}
