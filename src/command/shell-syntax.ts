// Tables for parse-command's scanner: which characters the POSIX shell (dash
// as /bin/sh) treats specially, which command names the shell runs itself
// rather than a program, and the names of the reasons a command needs one.

/*
 * Reasons, as bits so a parse collects them without allocating; they are
 * reported in this order, each at most once. Pipelines, redirections and
 * lists run without a shell; only their malformed or unsupported forms are
 * reasons (each a syntax error to dash, which then says so):
 *   pipe                 a `|` with no command before or after it (`| a`, `a |`, `a | | b`)
 *   redirection          a redirection without a target (`a >`), `>&`/`<&` to anything but
 *                        one digit or `-` (`>&12`, `>&file`)
 *   command list         a `;`, `&&` or `||` with no command before it, one of the last two
 *                        with none after it, `;;`
 *   newline              an unquoted newline (a second command)
 *   variable             any `$` that is not `$(`: `$VAR`, `${…}`, `$1`, `$'…'`, a lone `$`
 *   command substitution `$(…)` and backquotes
 *   arithmetic           `$((…))`
 *   glob                 unquoted `*` `?` `[`
 *   tilde                `~` starting a word (unless its prefix holds a `:`, as in the range
 *                        `~:20`: no user has that name), or anywhere unquoted in an assignment value
 *   comment              unquoted `#` starting a word
 *   subshell             unquoted `(` `)`
 *   brace                unquoted `{` `}` (bash brace expansion, or a `{ …; }` group)
 *   history              unquoted `!` in the command word (`! cmd` negates; bash expands `!x`)
 *   unbalanced quote     a `'` `"` or backquote that is never closed
 *   trailing backslash   a `\` ending the string
 *   control character    a control character outside quotes (other than tab, newline;
 *                        an escaped tab `\<tab>` is a literal tab)
 *   reserved word        command word `if`, `for`, `[[`, …
 *   builtin              command word that dash runs as a built-in (`cd`, `exit`, `echo`, `true`, …)
 *   empty command        no command word at all (only blanks, assignments, comments), or a
 *                        command of only redirections or assignments in a pipeline or list
 *   background           `&`: a command run in the background
 *   here-document        `<<` and `<<-`
 *   too large            more than 256 commands or 4,096 redirections (parse-command.ts)
 */
export const REASON_NAMES: readonly string[] = [
  'pipe', 'redirection', 'command list', 'newline', 'variable', 'command substitution',
  'arithmetic', 'glob', 'tilde', 'comment', 'subshell', 'brace', 'history',
  'unbalanced quote', 'trailing backslash', 'control character', 'reserved word', 'builtin',
  'empty command', 'background', 'here-document', 'too large',
];

export const R_PIPE = 1 << 0;
export const R_REDIRECTION = 1 << 1;
export const R_LIST = 1 << 2;
export const R_NEWLINE = 1 << 3;
export const R_VARIABLE = 1 << 4;
export const R_COMMAND_SUBSTITUTION = 1 << 5;
export const R_ARITHMETIC = 1 << 6;
export const R_GLOB = 1 << 7;
export const R_TILDE = 1 << 8;
export const R_COMMENT = 1 << 9;
export const R_SUBSHELL = 1 << 10;
export const R_BRACE = 1 << 11;
export const R_HISTORY = 1 << 12;
export const R_UNBALANCED = 1 << 13;
export const R_TRAILING_BACKSLASH = 1 << 14;
export const R_CONTROL = 1 << 15;
export const R_RESERVED = 1 << 16;
export const R_BUILTIN = 1 << 17;
export const R_EMPTY = 1 << 18;
export const R_BACKGROUND = 1 << 19;
export const R_HERE_DOCUMENT = 1 << 20;
export const R_TOO_LARGE = 1 << 21;

export function reasonNames(bits: number): string[] {
  const out: string[] = [];
  for (let i = 0; bits !== 0; i++, bits >>>= 1) if (bits & 1) out.push(REASON_NAMES[i]);
  return out;
}

// Character classes outside quotes. Everything not listed is an ordinary word
// character; dash works on bytes and gives non-ASCII no meaning.
export const K_WORD = 0;
export const K_BLANK = 1;
export const K_NEWLINE = 2;
export const K_SQUOTE = 3;
export const K_DQUOTE = 4;
export const K_BACKSLASH = 5;
export const K_DOLLAR = 6;
export const K_BACKQUOTE = 7;
export const K_PIPE = 8;
export const K_LIST = 9; // ; &
export const K_REDIRECT = 10;
export const K_PAREN = 11;
export const K_BRACE = 12;
export const K_GLOB = 13;
export const K_TILDE = 14;
export const K_HASH = 15;
export const K_BANG = 16;
export const K_EQUALS = 17;
export const K_CONTROL = 18;

export const CHAR_CLASS = new Uint8Array(128);
for (let c = 0; c < 32; c++) CHAR_CLASS[c] = K_CONTROL;
CHAR_CLASS[127] = K_CONTROL;
const classes: Array<[string, number]> = [
  [' \t', K_BLANK], ['\n', K_NEWLINE], ["'", K_SQUOTE], ['"', K_DQUOTE], ['\\', K_BACKSLASH],
  ['$', K_DOLLAR], ['`', K_BACKQUOTE], ['|', K_PIPE], [';&', K_LIST], ['<>', K_REDIRECT],
  ['()', K_PAREN], ['{}', K_BRACE], ['*?[', K_GLOB], ['~', K_TILDE], ['#', K_HASH],
  ['!', K_BANG], ['=', K_EQUALS],
];
for (const [chars, k] of classes) for (const ch of chars) CHAR_CLASS[ch.charCodeAt(0)] = k;

/** 1: may start a name ([A-Za-z_]); 2: digit; 0: not a name character. */
export const NAME_CHAR = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z_]/.test(ch)) NAME_CHAR[c] = 1;
  else if (/[0-9]/.test(ch)) NAME_CHAR[c] = 2;
}

// `{`, `}` and `!` are reserved words too, but unquoted they are already
// reported as 'brace' and 'history', and quoted they are plain command names
// (as `'if'` is to dash; we still refuse that one, to be safe).
export const RESERVED_WORDS: ReadonlySet<string> = new Set([
  'if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'case', 'esac', 'while', 'until', 'for',
  'in', 'function', 'select', 'time', '[[', ']]',
]);

// Every name dash 0.5.12 (Debian's /bin/sh) runs as a built-in, as listed
// in its src/builtins.def.in: dash finds these before searching PATH, so the
// program of the same name is not what `sh -c` runs, and none behaves exactly
// like it (dash's echo expands `\n`, its printf refuses options, its true
// ignores `--help`, its pwd and kill refuse `--version`). No
// exception for argument-less `true`/`false` either: a PATH without them, or
// with another program of that name first, would still change the result.
// A name with a `/` in it is never looked up, so `/bin/echo` runs the file.
// `fc` exists only in dash built without SMALL (not Debian's); `[` unquoted
// is already a glob, quoted or escaped it is the test built-in.
export const BUILTINS: ReadonlySet<string> = new Set([
  // special built-ins
  'break', ':', '.', 'continue', 'eval', 'exec', 'exit', 'export', 'readonly', 'return', 'set',
  'shift', 'times', 'trap', 'unset', 'local',
  // the others; `chdir` is dash's other name for `cd`
  'cd', 'chdir', 'alias', 'unalias', 'umask', 'ulimit', 'wait', 'jobs', 'fg', 'bg', 'command',
  'getopts', 'read', 'hash', 'type', 'echo', 'printf', 'test', '[', 'kill', 'pwd', 'true', 'false',
]);
