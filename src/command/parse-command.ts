// parseCommand: split a command string as /bin/sh would, or say why only a
// shell can run it. What it accepts follows POSIX word rules exactly (the
// tests check it against the real /bin/sh); anything whose meaning depends on
// the shell is refused conservatively, since a wrong "needs a shell" costs a
// /bin/sh and a wrong "doesn't" runs the wrong thing. One pass over char
// codes, no regular expressions: it runs for every check a daemon starts.
import { checkString } from '../util/validate';
import { readDoubleQuoted, scanOperator, skipExpansion, tildeNamesNoUser } from './shell-scan';
import {
  BUILTINS, CHAR_CLASS, K_BACKQUOTE, K_BACKSLASH, K_BANG, K_BLANK, K_BRACE, K_CONTROL, K_DOLLAR,
  K_DQUOTE, K_EQUALS, K_GLOB, K_HASH, K_PAREN, K_REDIRECT, K_SQUOTE, K_TILDE, K_WORD, NAME_CHAR,
  R_BRACE, R_BUILTIN, R_COMMENT, R_CONTROL, R_EMPTY, R_GLOB, R_HISTORY, R_RESERVED, R_TILDE,
  R_TRAILING_BACKSLASH, R_UNBALANCED, RESERVED_WORDS, reasonNames,
} from './shell-syntax';

export interface ParsedCommand {
  /** The words, quotes removed; argv[0] is the program. Only meaningful when !needsShell. */
  argv: string[];
  /** Leading NAME=value words: the shell adds them to the program's environment.
   * A null-prototype object: `__proto__`, `constructor`, `toString` are
   * ordinary names here, and nothing is inherited. */
  env: Record<string, string>;
  /** The string uses something only a shell can do; argv and env are then partial. */
  needsShell: boolean;
  /** What needs the shell, in a fixed order, each once (see shell-syntax.ts). */
  reasons: string[];
}

export function parseCommand(command: string): ParsedCommand {
  const p = new Scanner(checkString(command, 'command'));
  p.scan();
  return { argv: p.argv, env: p.env, needsShell: p.reasons !== 0, reasons: reasonNames(p.reasons) };
}

class Scanner {
  readonly argv: string[] = [];
  // Null prototype: a plain object would inherit `constructor`/`toString` and
  // turn `__proto__=x` into a prototype change. It costs ~30 ns a command.
  readonly env: Record<string, string> = Object.create(null) as Record<string, string>;
  reasons = 0;
  // The word being built: `word` holds finished parts, s[run, i) the pending
  // unquoted run that has no escapes in it yet.
  word = '';
  private run = 0;
  private inWord = false;
  // Before the command word of a simple command, NAME=value words are assignments.
  private leading = true;
  // The word so far is an unquoted name, so an unquoted `=` makes it an assignment.
  private nameSoFar = false;
  private assignTo: string | null = null;
  private bang = false;

  constructor(private readonly s: string) {}

  scan(): void {
    const s = this.s;
    const n = s.length;
    let i = 0;
    while (i < n) {
      const c = s.charCodeAt(i);
      const k = c < 128 ? CHAR_CLASS[c] : c < 0xa0 ? K_CONTROL : K_WORD;
      switch (k) {
        case K_WORD:
          if (!this.inWord) this.start(i, c < 128 && NAME_CHAR[c] === 1);
          else if (this.nameSoFar && (c >= 128 || NAME_CHAR[c] === 0)) this.nameSoFar = false;
          i++;
          // Most of a command is runs of ordinary characters: take them in a tight loop.
          if (!this.nameSoFar) {
            while (i < n) {
              const d = s.charCodeAt(i);
              if (d < 128 ? CHAR_CLASS[d] !== K_WORD : d < 0xa0) break;
              i++;
            }
          }
          break;
        case K_BLANK:
          this.end(i++);
          break;
        case K_EQUALS:
          if (this.inWord && this.nameSoFar) {
            this.assignTo = this.word + s.slice(this.run, i);
            this.word = '';
            this.run = i + 1;
            this.nameSoFar = false;
          } else this.literal(i);
          i++;
          break;
        case K_SQUOTE: {
          this.part(i);
          const j = s.indexOf("'", i + 1);
          if (j < 0) this.reasons |= R_UNBALANCED;
          this.word += s.slice(i + 1, j < 0 ? n : j);
          i = j < 0 ? n : j + 1;
          this.run = i;
          break;
        }
        case K_DQUOTE:
          this.part(i);
          i = this.run = readDoubleQuoted(s, i + 1, this);
          break;
        case K_BACKSLASH:
          if (i + 1 === n) {
            this.reasons |= R_TRAILING_BACKSLASH;
            i++;
          } else if (s.charCodeAt(i + 1) === 10) {
            // Line continuation: gone before words are even formed, so it
            // neither ends a word nor stops `FO\<newline>O=1` being an assignment.
            if (this.inWord) this.word += s.slice(this.run, i);
            i += 2;
            this.run = i;
          } else {
            this.part(i);
            const d = s.charCodeAt(i + 1);
            // An escaped tab is a literal tab to dash (Nagios' own tests
            // use `\<tab>`); other escaped control characters stay refused.
            if ((d < 32 && d !== 9) || (d >= 127 && d < 0xa0)) this.reasons |= R_CONTROL;
            this.run = i + 1; // the escaped character starts the next run
            i += 2;
          }
          break;
        case K_DOLLAR:
        case K_BACKQUOTE:
          this.literal(i);
          i = skipExpansion(s, i, this);
          break;
        case K_HASH:
          if (this.inWord) this.literal(i++);
          else {
            this.reasons |= R_COMMENT;
            const j = s.indexOf('\n', i);
            i = j < 0 ? n : j;
          }
          break;
        case K_TILDE:
          // Tilde expansion happens at the start of a word, and after `=` or
          // `:` in an assignment value (`A=x:~/bin`): refuse any ~ in those,
          // except a word-starting prefix with a `:` in it (the Nagios range
          // `~:20`), which names no user, so dash leaves the word as it is.
          if (this.assignTo !== null || (!this.inWord && !tildeNamesNoUser(s, i))) this.reasons |= R_TILDE;
          this.literal(i++);
          break;
        case K_BANG:
          this.literal(i++);
          this.bang = true;
          break;
        case K_GLOB:
        case K_BRACE:
        case K_CONTROL:
          this.reasons |= k === K_GLOB ? R_GLOB : k === K_BRACE ? R_BRACE : R_CONTROL;
          this.literal(i++);
          break;
        default:
          // Operators end the word; what follows them is best effort.
          this.end(i);
          i = scanOperator(s, i, k, this);
          // A new command starts: its first word is checked too.
          if (k !== K_REDIRECT && k !== K_PAREN) this.leading = true;
      }
    }
    this.end(n);
    if (this.argv.length === 0) this.reasons |= R_EMPTY;
  }

  private start(i: number, nameStart: boolean): void {
    this.inWord = true;
    this.word = '';
    this.run = i;
    this.nameSoFar = this.leading && nameStart;
  }

  /** An unquoted character that is not part of a name. */
  private literal(i: number): void {
    if (!this.inWord) this.start(i, false);
    else this.nameSoFar = false;
  }

  /** A quoted or escaped part begins at i: close the pending run. */
  private part(i: number): void {
    if (this.inWord) this.word += this.s.slice(this.run, i);
    else {
      this.inWord = true;
      this.word = '';
    }
    this.nameSoFar = false;
  }

  private end(i: number): void {
    if (!this.inWord) return;
    const value = this.word + this.s.slice(this.run, i);
    this.inWord = false;
    this.word = '';
    if (this.assignTo !== null) {
      this.env[this.assignTo] = value;
      this.assignTo = null;
    } else {
      if (this.leading) {
        this.leading = false;
        if (this.bang) this.reasons |= R_HISTORY;
        // None is longer than 8; skipping paths saves hashing them.
        if (value.length <= 8) {
          if (RESERVED_WORDS.has(value)) this.reasons |= R_RESERVED;
          if (BUILTINS.has(value)) this.reasons |= R_BUILTIN;
        }
      }
      this.argv.push(value);
    }
    this.bang = false;
  }
}
