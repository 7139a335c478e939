// Where and why JSON.parse refused a checks file, in our own words: V8's
// message quotes the input around the error ("Unexpected token 'r',
// "root:$6$…" is not valid JSON"), and the file may not be a checks file at
// all but a secret one a symlink points to, read as root, the message going
// to a journal others read. So: the position and a reason, at most one
// character of the file. One pass over char codes with an explicit stack of
// open brackets: linear, and no recursion however deep the nesting.

export interface JsonSyntaxError {
  /** Offset of the error in UTF-16 code units. */
  offset: number;
  reason: string;
}

// What may come next.
const Expect = { Value: 0, Key: 1, After: 2 } as const;

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/** One character, escaped: a control character or a quote cannot reach the terminal as is. */
function charAt(text: string, i: number): string {
  const c = text.charCodeAt(i);
  return c > 32 && c < 127 ? JSON.stringify(text[i]) : `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The end of the string starting at `i` (a `"`), or its error. */
function scanString(text: string, i: number): number | JsonSyntaxError {
  const start = i++;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 34) return i + 1;
    if (c < 32) return { offset: i, reason: `${charAt(text, i)} (a control character) in a string: write it as an escape` };
    if (c === 92) {
      const e = text.charCodeAt(i + 1);
      if (e === 117 /* u */) {
        for (let k = 2; k < 6; k++) {
          if (!isHex(text.charCodeAt(i + k))) return { offset: i, reason: 'a \\u escape needs 4 hex digits' };
        }
        i += 6;
        continue;
      }
      // " \ / b f n r t
      if (e === 34 || e === 92 || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) {
        i += 2;
        continue;
      }
      return { offset: i, reason: 'a bad escape in a string (only \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)' };
    }
    i++;
  }
  return { offset: start, reason: 'a string that is never closed' };
}

/** The end of the number starting at `i`, or its error. */
function scanNumber(text: string, i: number): number | JsonSyntaxError {
  const start = i;
  const digits = (): boolean => {
    const from = i;
    while (isDigit(text.charCodeAt(i))) i++;
    return i > from;
  };
  if (text.charCodeAt(i) === 45 /* - */) i++;
  if (text.charCodeAt(i) === 48 /* 0 */) i++;
  else if (!digits()) return { offset: start, reason: 'a bad number' };
  if (text.charCodeAt(i) === 46 /* . */) {
    i++;
    if (!digits()) return { offset: start, reason: 'a bad number (digits must follow the ".")' };
  }
  const e = text.charCodeAt(i);
  if (e === 101 || e === 69) {
    i++;
    const s = text.charCodeAt(i);
    if (s === 43 || s === 45) i++;
    if (!digits()) return { offset: start, reason: 'a bad number (digits must follow the exponent)' };
  }
  return i;
}

function scanValue(text: string, i: number): number | JsonSyntaxError {
  const c = text.charCodeAt(i);
  if (c === 34) return scanString(text, i);
  if (c === 45 || isDigit(c)) return scanNumber(text, i);
  for (const word of ['true', 'false', 'null']) if (text.startsWith(word, i)) return i + word.length;
  return { offset: i, reason: `unexpected ${charAt(text, i)}: expected a value` };
}

/** The first syntax error of `text` as JSON, or null if it is valid JSON. */
export function jsonSyntaxError(text: string): JsonSyntaxError | null {
  const n = text.length;
  const open: number[] = [];
  let expect: number = Expect.Value;
  let i = 0;
  for (;;) {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    if (expect === Expect.After && open.length === 0) {
      return i < n ? { offset: i, reason: `unexpected ${charAt(text, i)} after the end of the JSON value` } : null;
    }
    if (i >= n) return { offset: i, reason: 'unexpected end of the file' };
    const c = text.charCodeAt(i);
    if (expect === Expect.After) {
      const top = open[open.length - 1];
      if (c === 44 /* , */) {
        expect = top === 123 ? Expect.Key : Expect.Value;
        i++;
      } else if (c === top + 2 /* } or ] */) {
        open.pop();
        i++;
      } else {
        return { offset: i, reason: `unexpected ${charAt(text, i)}: expected "," or "${top === 123 ? '}' : ']'}"` };
      }
      continue;
    }
    if (expect === Expect.Key) {
      if (c !== 34) return { offset: i, reason: `unexpected ${charAt(text, i)}: expected a field name in double quotes` };
      const end = scanString(text, i);
      if (typeof end !== 'number') return end;
      i = end;
      while (i < n && isSpace(text.charCodeAt(i))) i++;
      if (text.charCodeAt(i) !== 58 /* : */) {
        return i < n ? { offset: i, reason: `unexpected ${charAt(text, i)}: expected ":" after a field name` } : { offset: i, reason: 'unexpected end of the file' };
      }
      i++;
      expect = Expect.Value;
      continue;
    }
    if (c === 123 /* { */ || c === 91 /* [ */) {
      open.push(c);
      i++;
      while (i < n && isSpace(text.charCodeAt(i))) i++;
      if (text.charCodeAt(i) === c + 2) {
        open.pop();
        i++;
        expect = Expect.After;
      } else {
        expect = c === 123 ? Expect.Key : Expect.Value;
      }
      continue;
    }
    const end = scanValue(text, i);
    if (typeof end !== 'number') return end;
    i = end;
    expect = Expect.After;
  }
}

/** "line L, column C" (1-based) of `offset` in `text`. */
export function lineColumn(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}
