// Scanning helpers for parse-command: double-quoted strings, operators, and
// stepping over `$…` and backquoted constructs. Once a command needs the shell
// its argv is best effort, so these only have to find where a construct ends,
// keeping its insides (`$(a | b)`) from adding misleading reasons.
import {
  CHAR_CLASS, K_WORD, K_NEWLINE, K_PAREN, K_PIPE, K_REDIRECT, NAME_CHAR, R_ARITHMETIC, R_COMMAND_SUBSTITUTION,
  R_LIST, R_NEWLINE, R_PIPE, R_REDIRECTION, R_SUBSHELL, R_UNBALANCED, R_VARIABLE,
} from './shell-syntax';

/** The part of the scanner these helpers write to. */
export interface WordSink {
  word: string;
  reasons: number;
}

/**
 * Reads "…" from just after the opening quote, appending its value to
 * sink.word; returns the index after the closing quote.
 */
export function readDoubleQuoted(s: string, i: number, sink: WordSink): number {
  const n = s.length;
  let seg = i;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === 34 /* " */) {
      sink.word += s.slice(seg, i);
      return i + 1;
    }
    if (c === 92 /* \ */) {
      const d = s.charCodeAt(i + 1);
      // Only $ ` " \ and newline are escapable here; before anything else
      // the backslash is an ordinary character.
      if (d === 36 || d === 96 || d === 34 || d === 92 || d === 10) {
        sink.word += s.slice(seg, i);
        seg = d === 10 ? i + 2 : i + 1;
      }
      i += 2;
    } else if (c === 36 /* $ */ || c === 96 /* ` */) i = skipExpansion(s, i, sink);
    else i++;
  }
  sink.reasons |= R_UNBALANCED;
  sink.word += s.slice(seg, n);
  return n;
}

/** Notes the unquoted operator at i (of class k) and returns the index after it. */
export function scanOperator(s: string, i: number, k: number, sink: WordSink): number {
  if (k === K_REDIRECT) {
    sink.reasons |= R_REDIRECTION;
    // >> >& >| <& <> << <<- : the second character belongs to the operator.
    const d = s.charCodeAt(i + 1);
    if (d === 38 || d === 124 || d === 60 || d === 62) i++;
    return s.charCodeAt(i + 1) === 45 ? i + 2 : i + 1;
  }
  if (k === K_PAREN) {
    sink.reasons |= R_SUBSHELL;
    return i + 1;
  }
  if (k === K_NEWLINE) {
    sink.reasons |= R_NEWLINE;
    return i + 1;
  }
  const doubled = s.charCodeAt(i + 1) === s.charCodeAt(i); // || && ;;
  sink.reasons |= k === K_PIPE && !doubled ? R_PIPE : R_LIST;
  return doubled ? i + 2 : i + 1;
}

/** Steps over the `$…` or backquoted construct at i, noting what it is. */
export function skipExpansion(s: string, i: number, sink: WordSink): number {
  if (s.charCodeAt(i) === 96) {
    sink.reasons |= R_COMMAND_SUBSTITUTION;
    const j = skipBackquoted(s, i);
    if (j >= 0) return j;
    sink.reasons |= R_UNBALANCED;
    return s.length;
  }
  sink.reasons |= dollarReason(s, i);
  return skipDollar(s, i);
}

/** The reason for the `$` at i: `$((` arithmetic, `$(` substitution, else variable. */
function dollarReason(s: string, i: number): number {
  if (s.charCodeAt(i + 1) !== 40 /* ( */) return R_VARIABLE;
  return s.charCodeAt(i + 2) === 40 ? R_ARITHMETIC : R_COMMAND_SUBSTITUTION;
}

/** Index just past the `$` construct at i (best effort: the shell is needed anyway). */
function skipDollar(s: string, i: number): number {
  const c = s.charCodeAt(i + 1);
  if (c === 40 /* ( */) return skipNested(s, i + 2, 40, 41);
  if (c === 123 /* { */) return skipNested(s, i + 2, 123, 125);
  if (c < 128 && NAME_CHAR[c] === 1) {
    let j = i + 2;
    while (j < s.length) {
      const d = s.charCodeAt(j);
      if (d >= 128 || NAME_CHAR[d] === 0) break;
      j++;
    }
    return j;
  }
  // Positional and special parameters are one character: $1 $@ $* $# $? $- $$ $!
  if ((c >= 48 && c <= 57) || c === 64 || c === 42 || c === 35 || c === 63 || c === 45 ||
      c === 36 || c === 33) {
    return i + 2;
  }
  return i + 1;
}

/** Index past the `close` matching an already consumed `open`, skipping quotes. */
function skipNested(s: string, i: number, open: number, close: number): number {
  let depth = 1;
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === 92 /* \ */) i += 2;
    else if (c === 39 /* ' */) {
      const j = s.indexOf("'", i + 1);
      i = j < 0 ? n : j + 1;
    } else if (c === 34 /* " */) i = skipDoubleQuoted(s, i + 1);
    else {
      if (c === open) depth++;
      else if (c === close && --depth === 0) return i + 1;
      i++;
    }
  }
  return n;
}

function skipDoubleQuoted(s: string, i: number): number {
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === 34) return i + 1;
    i += c === 92 ? 2 : 1;
  }
  return n;
}

/** Index past the backquote closing the one at i, or -1 if it is never closed. */
function skipBackquoted(s: string, i: number): number {
  const n = s.length;
  for (let j = i + 1; j < n; j++) {
    const c = s.charCodeAt(j);
    if (c === 92) j++;
    else if (c === 96) return j + 1;
  }
  return -1;
}

/**
 * For the unquoted `~` at i that starts a word: true when its tilde-prefix
 * (the characters up to the first `/`) contains a `:` before anything quoted
 * or special. No user name has a `:` (it separates passwd fields), so dash's
 * getpwnam() fails and the word stays as written: `check_snmp -w ~:20`. The
 * scan stops at the end of the word, so each word is looked at once.
 */
export function tildeNamesNoUser(s: string, i: number): boolean {
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === 58 /* : */) return true;
    if (c === 47 /* / */ || c >= 128 || CHAR_CLASS[c] !== K_WORD) return false;
  }
  return false;
}
