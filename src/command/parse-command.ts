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
  K_DQUOTE, K_EQUALS, K_GLOB, K_HASH, K_LIST, K_PIPE, K_REDIRECT, K_SQUOTE, K_TILDE, K_WORD, NAME_CHAR,
  R_BACKGROUND, R_BRACE, R_BUILTIN, R_COMMENT, R_CONTROL, R_EMPTY, R_GLOB, R_HERE_DOCUMENT, R_HISTORY, R_LIST,
  R_PIPE, R_REDIRECTION, R_RESERVED, R_TILDE, R_TOO_LARGE, R_TRAILING_BACKSLASH, R_UNBALANCED, RESERVED_WORDS,
  reasonNames,
} from './shell-syntax';
import { defaultFd, type ListOp, type Pipeline, type RedirectOp, type Stage } from './command-list';

export interface ParsedCommand {
  /** The words of the (first) command, quotes removed; argv[0] is the program. Only meaningful when !needsShell. */
  argv: string[];
  /** Leading NAME=value words: the shell adds them to the program's environment.
   * A null-prototype object: `__proto__`, `constructor`, `toString` are
   * ordinary names here, and nothing is inherited. */
  env: Record<string, string>;
  /** The string uses something only a shell can do; argv, env and list are then partial. */
  needsShell: boolean;
  /** What needs the shell, in a fixed order, each once (see shell-syntax.ts). */
  reasons: string[];
  /** One command, no redirection: argv and env say all there is. Otherwise see `list`. */
  simple: boolean;
  /**
   * The whole string: pipelines (`a | b`) of stages with their redirections
   * (`>> file`, `2>&1`), joined by `;`, `&&` and `||`. exec() and the others
   * run it without a shell exactly as /bin/sh would; it can be passed to
   * them as it is.
   */
  list: Pipeline[];
}

export function parseCommand(command: string): ParsedCommand {
  const p = new Scanner(checkString(command, 'command'));
  p.scan();
  const first = p.list.length > 0 ? p.list[0].stages[0] : p.stage;
  const simple = p.list.length === 1 && p.list[0].stages.length === 1 && first.redirects.length === 0;
  return {
    argv: first.argv, env: first.env, needsShell: p.reasons !== 0, reasons: reasonNames(p.reasons), simple, list: p.list,
  };
}

/**
 * Limits of what runs without a shell: each stage is a process started on
 * the event loop, each redirection a step in its child. Past them the string
 * needs /bin/sh ('too large'), which has none, and the parse keeps no more.
 */
export const MAX_COMMANDS = 256;
export const MAX_REDIRECTS = 4096;

function newStage(): Stage {
  // Null prototype: a plain object would inherit `constructor`/`toString` and
  // turn `__proto__=x` into a prototype change. It costs ~30 ns a command.
  return { argv: [], env: Object.create(null) as Record<string, string>, redirects: [] };
}

class Scanner {
  readonly list: Pipeline[] = [];
  /** The stages of the pipeline being read, and the stage being read. */
  private stages: Stage[] = [];
  stage: Stage = newStage();
  /** The operator before the pipeline being read. */
  private op: ListOp = ';';
  /** Commands and redirections so far, against MAX_COMMANDS and MAX_REDIRECTS. */
  private commands = 0;
  private redirections = 0;
  /** A redirection operator read; the next word is its target. */
  private pending: { fd: number; op: RedirectOp } | null = null;
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
  /** The word so far has a quoted or escaped part. */
  private quoted = false;

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
        case K_REDIRECT:
          i = this.redirect(i);
          break;
        case K_PIPE:
        case K_LIST:
          this.end(i);
          i = this.listOperator(i, k);
          break;
        default:
          // Newlines and parentheses: what follows them is best effort.
          this.end(i);
          i = scanOperator(s, i, k, this);
          this.leading = true;
      }
    }
    this.end(n);
    this.finish();
  }

  /**
   * The redirection operator at i. A single unquoted digit right before it is
   * its fd (`2>`); dash takes no more digits than one (`12>f` is the word 12
   * and `>f`). Returns the index after the operator.
   */
  private redirect(i: number): number {
    const s = this.s;
    let fd = -1;
    // The word so far (a line continuation may have moved its start into `word`: `2\<newline>>f` is `2>f`).
    if (this.inWord && !this.quoted && this.assignTo === null && this.word.length + i - this.run === 1) {
      const d = this.word === '' ? s.charCodeAt(this.run) : this.word.charCodeAt(0);
      if (d >= 48 && d <= 57) {
        fd = d - 48;
        this.inWord = false;
        this.nameSoFar = false;
      }
    }
    this.end(i);
    if (this.pending !== null) this.reasons |= R_REDIRECTION; // `> >f`
    const c = s.charCodeAt(i);
    const d = s.charCodeAt(i + 1);
    let op: RedirectOp;
    let len = 2;
    if (c === 60 /* < */) {
      if (d === 60) {
        // A here-document: its body is lines after this one; only a shell reads it.
        this.reasons |= R_HERE_DOCUMENT;
        op = '<';
        len = s.charCodeAt(i + 2) === 45 /* - */ ? 3 : 2;
      } else if (d === 38 /* & */) op = '<&';
      else if (d === 62 /* > */) op = '<>';
      else {
        op = '<';
        len = 1;
      }
    } else if (d === 62) op = '>>';
    else if (d === 38) op = '>&';
    else if (d === 124 /* | */) op = '>|';
    else {
      op = '>';
      len = 1;
    }
    this.pending = { fd: fd < 0 ? defaultFd(op) : fd, op };
    return i + len;
  }

  /** `|`, `||`, `&&`, `;`, `&` or `;;` at i (class K_PIPE or K_LIST); returns the index after it. */
  private listOperator(i: number, k: number): number {
    const s = this.s;
    const c = s.charCodeAt(i);
    const doubled = s.charCodeAt(i + 1) === c;
    this.leading = true;
    if (k === K_PIPE && !doubled) {
      if (!this.endStage()) this.reasons |= R_PIPE;
      return i + 1;
    }
    if (c === 38 /* & */ && !doubled) {
      // `a & b`: a runs in the background, which only a shell does.
      this.reasons |= R_BACKGROUND;
      this.endPipeline(';', R_LIST);
      return i + 1;
    }
    if (c === 59 /* ; */ && doubled) {
      // `;;` ends a case item: a syntax error anywhere else.
      this.reasons |= R_LIST;
      return i + 2;
    }
    this.endPipeline(c === 59 ? ';' : c === 38 ? '&&' : '||', R_LIST);
    return doubled ? i + 2 : i + 1;
  }

  /** Ends the stage being read; false when it is empty (`| b`, `a | | b`: a syntax error). */
  private endStage(): boolean {
    if (this.pending !== null) {
      this.reasons |= R_REDIRECTION; // `a > | b`
      this.pending = null;
    }
    const st = this.stage;
    if (st.argv.length === 0 && st.redirects.length === 0 && !hasKeys(st.env)) return false;
    // Only redirections or assignments: dash runs no program for it.
    if (st.argv.length === 0) this.reasons |= R_EMPTY;
    // Past the limit nothing more is kept (memory stays bounded); the scan goes on.
    if (++this.commands > MAX_COMMANDS) this.reasons |= R_TOO_LARGE;
    else this.stages.push(st);
    this.stage = newStage();
    return true;
  }

  /** Ends the pipeline being read at a list operator; the next one runs after `next`. */
  private endPipeline(next: ListOp, syntax: number): void {
    if (!this.endStage()) {
      // `; a`, `a && && b`, `a | ;`
      this.reasons |= this.stages.length > 0 ? R_PIPE : syntax;
    } else if (this.stages.length > 0) {
      this.list.push({ op: this.op, stages: this.stages });
    }
    this.stages = [];
    this.op = next;
  }

  /** The end of the string: a trailing `;` is fine, a trailing `|`, `&&` or `||` is not. */
  private finish(): void {
    if (this.endStage()) {
      if (this.stages.length > 0) this.list.push({ op: this.op, stages: this.stages });
    } else if (this.stages.length > 0) {
      this.reasons |= R_PIPE;
      this.list.push({ op: this.op, stages: this.stages });
    } else if (this.list.length > 0 && this.op !== ';') {
      this.reasons |= R_LIST;
    }
    this.stages = [];
    if (!this.list.some((p) => p.stages.some((st) => st.argv.length > 0))) this.reasons |= R_EMPTY;
  }

  private start(i: number, nameStart: boolean): void {
    this.inWord = true;
    this.word = '';
    this.run = i;
    this.quoted = false;
    // A redirection's target is never an assignment (`>A=1` names a file).
    this.nameSoFar = this.leading && nameStart && this.pending === null;
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
    this.quoted = true;
    this.nameSoFar = false;
  }

  private end(i: number): void {
    if (!this.inWord) return;
    const value = this.word + this.s.slice(this.run, i);
    this.inWord = false;
    this.word = '';
    if (this.pending !== null) {
      this.target(value);
    } else if (this.assignTo !== null) {
      this.stage.env[this.assignTo] = value;
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
      this.stage.argv.push(value);
    }
    this.bang = false;
  }

  /** The word after a redirection operator. */
  private target(value: string): void {
    const { fd, op } = this.pending!;
    this.pending = null;
    // `>&1`, `<&0`, `>&-`: one unquoted digit or `-`; dash refuses anything
    // else (`>&12`, `>&file`: "Bad fd number").
    if ((op === '>&' || op === '<&') &&
        (this.quoted || value.length !== 1 || !((value >= '0' && value <= '9') || value === '-'))) {
      this.reasons |= R_REDIRECTION;
    }
    if (++this.redirections > MAX_REDIRECTS) this.reasons |= R_TOO_LARGE;
    else this.stage.redirects.push({ fd, op, target: value });
  }
}

function hasKeys(o: object): boolean {
  return Object.keys(o).length > 0;
}
