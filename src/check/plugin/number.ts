// Numbers in perfdata and threshold ranges:
//   [-+]? (digits [. digits*] | . digits) ([eE] [-+]? digits)?
// with ',' accepted in place of the decimal point. A scan over char codes,
// not a regular expression: plugin output is untrusted, and a pattern with
// anything after a digit run that can fail backtracks over the run — a value
// of 65,000 digits followed by U+2028 blocked the event loop for 3.6 s
// (issue 8). Every loop here only moves forward.

function digitsEnd(text: string, i: number): number {
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) break;
    i++;
  }
  return i;
}

/**
 * Index just past the longest number starting at `start`, or `start` when
 * none starts there. Greedy like the grammar above: an exponent is taken only
 * when digits follow the `e`, so `1ex` is the number `1` and the text `ex`.
 */
export function scanNumber(text: string, start: number): number {
  let i = start;
  const sign = text.charCodeAt(i);
  if (sign === 43 /* + */ || sign === 45 /* - */) i++;
  const intEnd = digitsEnd(text, i);
  let end: number;
  const mark = text.charCodeAt(intEnd);
  if (mark === 46 /* . */ || mark === 44 /* , */) {
    const fracEnd = digitsEnd(text, intEnd + 1);
    if (intEnd === i && fracEnd === intEnd + 1) return start; // a lone mark
    end = fracEnd;
  } else {
    if (intEnd === i) return start;
    end = intEnd;
  }
  const e = text.charCodeAt(end);
  if (e === 101 /* e */ || e === 69 /* E */) {
    let j = end + 1;
    const expSign = text.charCodeAt(j);
    if (expSign === 43 || expSign === 45) j++;
    const expEnd = digitsEnd(text, j);
    if (expEnd > j) end = expEnd;
  }
  return end;
}

/** The value of a span scanNumber accepted (it holds at most one ','). */
export function numberValue(span: string): number {
  return Number(span.indexOf(',') < 0 ? span : span.replace(',', '.'));
}

/** A perfdata/threshold number: decimal with optional exponent; ',' as the decimal mark is accepted. */
export function parseNumber(text: string): number | null {
  const end = scanNumber(text, 0);
  return end > 0 && end === text.length ? numberValue(text) : null;
}
