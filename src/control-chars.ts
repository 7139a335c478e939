// Text from a plugin or a peer, shown to a person: on a terminal a raw \r
// overprints a CRITICAL line with a forged OK one, ESC[2J clears the screen,
// an OSC sequence retitles the window, a bidi override reverses what is read.
// One escaper for every human-facing sink (the worker's log, `noshell run
// --format text`); machine-facing output (JSON lines, a plugin line handed on
// to Nagios) is left as it is.

/** U+2028/2029 (line breaks to some readers) and the bidi controls that reorder what a terminal shows. */
function isBidiOrSeparator(c: number): boolean {
  return c === 0x2028 || c === 0x2029 || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c === 0x200e || c === 0x200f;
}

/**
 * `text` as one line a terminal shows as it is: control characters (C0, DEL,
 * C1) written as \xNN, line separators and bidi controls as \uNNNN, and the
 * text cut to `max` characters (with how long it was). One scan; the text is
 * returned as it is when clean.
 */
export function escapeControls(text: string, max = Infinity): string {
  const kept = text.length > max ? text.slice(0, max) : text;
  let out = '';
  let from = 0;
  for (let i = 0; i < kept.length; i++) {
    const c = kept.charCodeAt(i);
    if (c >= 0x20 && c !== 0x7f && !(c >= 0x80 && c <= 0x9f) && !isBidiOrSeparator(c)) continue;
    out += `${kept.slice(from, i)}${c < 0x100 ? `\\x${c.toString(16).padStart(2, '0')}` : `\\u${c.toString(16)}`}`;
    from = i + 1;
  }
  out = from === 0 ? kept : out + kept.slice(from);
  return text.length > max ? `${out}… (${text.length} characters)` : out;
}
