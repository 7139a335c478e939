// Nagios-style macros in checks-file commands: `$USER1$`…`$USER256$` from
// the file's `macros` section (Nagios' resource.cfg), `$ARG1$`…`$ARG32$` from
// a check's `args`, and `$$` for a literal dollar. They are expanded as text
// before the command is split into words, as Nagios does: a value holding
// shell syntax (`a; id`) makes the command need a shell, and the check's
// `shell` option decides (with "auto", /bin/sh runs it, as in Nagios). An
// argv-array command keeps each expanded element one word.
//
// One pass over the string: each `$` looks ahead only over name characters,
// and expanded values are never scanned again (a value holding `$ARG2$`
// stays as written).
import { MAX_NAME } from '../util/quote-text';

/** Nagios 4's MAX_USER_MACROS and MAX_COMMAND_ARGUMENTS. */
export const MAX_USER_MACROS = 256;
export const MAX_ARGS = 32;

export class MacroError extends TypeError {}

/** `$NAME$` for a message: a name is upper-case letters, digits and _ only, but of any length. */
function shownMacro(name: string): string {
  return name.length > MAX_NAME ? `$${name.slice(0, MAX_NAME)}…$ (${name.length} characters)` : `$${name}$`;
}

function isUpperOrDigit(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

/** The n of `PREFIXn` (n without leading zeros, 1..max), or 0. */
function macroNumber(name: string, prefix: string, max: number): number {
  if (!name.startsWith(prefix)) return 0;
  const digits = name.slice(prefix.length);
  if (digits === '' || digits.length > 3 || digits[0] === '0') return 0;
  for (let i = 0; i < digits.length; i++) {
    const c = digits.charCodeAt(i);
    if (c < 48 || c > 57) return 0;
  }
  const n = Number(digits);
  return n <= max ? n : 0;
}

/** Whether `name` is a user-macro name `USER1`…`USER256`. */
export function isUserMacroName(name: string): boolean {
  return macroNumber(name, 'USER', MAX_USER_MACROS) !== 0;
}

/**
 * Expands the macros in `text`. `$NAME$` with an upper-case name that is not
 * a macro we know (`$HOSTADDRESS$`: this is no monitoring core) and an
 * undefined `$USERn$` are errors; an `$ARGn$` beyond `args` is empty, as in
 * Nagios, so optional trailing arguments work. A `$` that starts no macro
 * (`$HOME`, a lone `$`) is kept for the command parser to judge.
 */
export function expandMacros(text: string, userMacros: ReadonlyMap<string, string>, args: readonly string[]): string {
  // Parts joined once at the end: `+=` of many small pieces builds a deep
  // rope that costs more than linear to flatten.
  const out: string[] = [];
  let seg = 0;
  let i = text.indexOf('$');
  while (i >= 0) {
    if (text.charCodeAt(i + 1) === 36 /* $ */) {
      out.push(text.slice(seg, i + 1));
      seg = i + 2;
      i = text.indexOf('$', seg);
      continue;
    }
    let j = i + 1;
    while (j < text.length && isUpperOrDigit(text.charCodeAt(j))) j++;
    const name = text.slice(i + 1, j);
    const c0 = name.charCodeAt(0);
    if (text.charCodeAt(j) !== 36 || !(c0 >= 65 && c0 <= 90)) {
      // Not `$NAME$`: the `$` is text; go on after it (the name characters
      // cannot hold another `$`, so nothing is scanned twice).
      i = text.indexOf('$', i + 1);
      continue;
    }
    let value: string;
    const arg = macroNumber(name, 'ARG', MAX_ARGS);
    if (arg !== 0) value = args[arg - 1] ?? '';
    else if (isUserMacroName(name)) {
      const v = userMacros.get(name);
      if (v === undefined) throw new MacroError(`${shownMacro(name)} is not defined in "macros"`);
      value = v;
    } else {
      throw new MacroError(`unknown macro ${shownMacro(name)} (only $USER1$…$USER${MAX_USER_MACROS}$, $ARG1$…$ARG${MAX_ARGS}$ and $$)`);
    }
    out.push(text.slice(seg, i), value);
    seg = j + 1;
    i = text.indexOf('$', seg);
  }
  if (out.length === 0) return text;
  out.push(text.slice(seg));
  return out.join('');
}
