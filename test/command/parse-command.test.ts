// parseCommand is only useful if "needsShell: false" really means "the same
// argv and environment /bin/sh would have executed". The heart of this file
// checks exactly that against the real /bin/sh (dash on Debian): a tiny C
// program, reachable under any command name through symlinks on PATH, prints
// the argv and environment it was started with.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommand, type ParsedCommand } from '../../src/command/parse-command';
import { exec, ShellSyntaxError } from '../../src/index';
import { REASON_NAMES } from '../../src/command/shell-syntax';

const PRINTER_C = `
#include <stdio.h>
#include <string.h>
extern char **environ;
int main(int argc, char **argv) {
  printf("%d", argc);
  putchar(0);
  for (int i = 0; i < argc; i++) fwrite(argv[i], 1, strlen(argv[i]) + 1, stdout);
  for (char **e = environ; *e; e++) fwrite(*e, 1, strlen(*e) + 1, stdout);
  return 0;
}
`;

// Every name Debian's dash runs as a built-in (its src/builtins.def.in, less
// `fc` and `cat`, which it is built without). parseCommand must refuse them
// all: dash never searches PATH for these, so the printer linked under such a
// name would not run, and the comparison with /bin/sh fails for any accepted.
const DASH_BUILTINS = ['break', ':', '.', 'continue', 'eval', 'exec', 'exit', 'export', 'readonly',
  'return', 'set', 'shift', 'times', 'trap', 'unset', 'local', 'cd', 'chdir', 'alias', 'unalias',
  'umask', 'ulimit', 'wait', 'jobs', 'fg', 'bg', 'command', 'getopts', 'read', 'hash', 'type',
  'echo', 'printf', 'test', '[', 'kill', 'pwd', 'true', 'false'];

const SHELL_HOME = '/nonexistent-home';
let tmp = '';
let binDir = '';
let workDir = '';
let printer = '';

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'noshell-parse-'));
  binDir = path.join(tmp, 'bin');
  workDir = path.join(tmp, 'work'); // empty, should a glob ever slip through
  fs.mkdirSync(binDir);
  fs.mkdirSync(workDir);
  printer = path.join(tmp, 'printargs');
  execFileSync('cc', ['-O2', '-x', 'c', '-o', printer, '-'], { input: PRINTER_C });
});

afterAll(() => {
  if (tmp !== '') fs.rmSync(tmp, { recursive: true, force: true });
});

/** What /bin/sh -c ran: the printer's argv and environment. */
function runShell(command: string): { argv: string[]; env: Record<string, string> } {
  let out: Buffer;
  try {
    // Without `--`, dash takes a command string starting with - or + for options.
    out = execFileSync('/bin/sh', ['-c', '--', command], {
      // HOME set: with it unset dash leaves `~` alone, and a wrongly
      // accepted tilde would go unnoticed.
      env: { PATH: binDir, HOME: SHELL_HOME },
      cwd: workDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 10_000,
    });
  } catch (err) {
    const e = err as { status: number | null; stderr?: Buffer };
    throw new Error(
      `/bin/sh -c ${JSON.stringify(command)} failed (status ${e.status}): ${e.stderr?.toString()}`,
      { cause: err },
    );
  }
  const fields = out.toString('utf8').split('\0');
  const argc = Number(fields[0]);
  const argv = fields.slice(1, 1 + argc);
  const env: Record<string, string> = Object.create(null);
  for (const entry of fields.slice(1 + argc, -1)) {
    const eq = entry.indexOf('=');
    env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return { argv, env };
}

/**
 * Compares an accepted parse with what /bin/sh does; false when the shell
 * cannot be asked (the command word is not a possible file name in PATH).
 */
function matchesShell(command: string, parsed: ParsedCommand): boolean {
  const name = parsed.argv[0];
  if (name !== printer) {
    if (name === undefined || name === '' || name === '.' || name === '..' || name.includes('/') ||
        Buffer.byteLength(name) > 255 || 'PATH' in parsed.env) {
      return false;
    }
    const link = path.join(binDir, name);
    if (!fs.existsSync(link)) fs.symlinkSync(printer, link);
  }
  const shell = runShell(command);
  // dash exports PWD when it did not inherit one.
  if (!('PWD' in parsed.env)) delete shell.env.PWD;
  expect({ command, ...shell }).toEqual({
    command,
    argv: parsed.argv,
    env: { PATH: binDir, HOME: SHELL_HOME, ...parsed.env },
  });
  return true;
}

/** The fields of a simple command's parse (its list is that command alone). */
function plain(parsed: ParsedCommand): Pick<ParsedCommand, 'argv' | 'env' | 'needsShell' | 'reasons' | 'simple'> {
  if (parsed.simple) expect(parsed.list).toEqual([{ op: ';', stages: [{ argv: parsed.argv, env: parsed.env, redirects: [] }] }]);
  return { argv: parsed.argv, env: parsed.env, needsShell: parsed.needsShell, reasons: parsed.reasons, simple: parsed.simple };
}

function accepted(command: string, argv: string[], env: Record<string, string> = {}): void {
  const parsed = parseCommand(command);
  expect(plain(parsed)).toEqual({ argv, env, needsShell: false, reasons: [], simple: true });
  // A path or an empty name cannot be swapped for the printer.
  const comparable = argv[0] === printer || (argv[0] !== '' && !argv[0].includes('/'));
  expect(matchesShell(command, parsed)).toBe(comparable);
}

function refused(command: string, reasons: string[]): void {
  const parsed = parseCommand(command);
  expect({ command, needsShell: parsed.needsShell, reasons: parsed.reasons })
    .toEqual({ command, needsShell: true, reasons });
}

describe('parseCommand: what it accepts is what /bin/sh runs', () => {
  it('splits Nagios plugin command lines', () => {
    accepted("/usr/lib/nagios/plugins/check_dummy 0 'all ok'",
      ['/usr/lib/nagios/plugins/check_dummy', '0', 'all ok']);
    accepted('check_http -H example.com -u "/a b"', ['check_http', '-H', 'example.com', '-u', '/a b']);
    accepted('check_disk -w 10% -c 5% -p /', ['check_disk', '-w', '10%', '-c', '5%', '-p', '/']);
    accepted("check_procs -a 'nginx: master' -C nginx -w 1:1",
      ['check_procs', '-a', 'nginx: master', '-C', 'nginx', '-w', '1:1']);
    accepted('check_ping -H 10.0.0.1 -w 100.0,20% -c 500.0,60%',
      ['check_ping', '-H', '10.0.0.1', '-w', '100.0,20%', '-c', '500.0,60%']);
  });

  it('runs a program given by path', () => {
    accepted(`${printer} 0 'all ok'`, [printer, '0', 'all ok']);
    accepted(`A=1 ${printer}`, [printer], { A: '1' });
  });

  it('splits the classic popen_noshell cases', () => {
    accepted('a\\ b', ['a b']);
    accepted('"a\\"b"', ['a"b']);
    accepted("'a'\"b\"c", ['abc']);
    accepted('"" \'\'', ['', '']);
  });

  it('joins quoted and unquoted parts and keeps empty arguments', () => {
    accepted('cmd a\\ b', ['cmd', 'a b']);
    accepted('cmd "a\\"b"', ['cmd', 'a"b']);
    accepted("cmd 'a'\"b\"c", ['cmd', 'abc']);
    accepted('cmd "" \'\'', ['cmd', '', '']);
    accepted("cmd ''x'' \"\"y", ['cmd', 'x', 'y']);
    accepted("cmd \"it's\"", ['cmd', "it's"]);
    accepted("cmd 'it'\\''s'", ['cmd', "it's"]);
    accepted(' \tcmd \t a\t\tb  ', ['cmd', 'a', 'b']);
  });

  it('keeps a backslash in double quotes unless $ ` " \\ or newline follows', () => {
    accepted('cmd "a\\b" "\\$x" "\\`" "\\\\" "a\\\nb" "\\\'"', ['cmd', 'a\\b', '$x', '`', '\\', 'ab', "\\'"]);
    accepted("cmd 'a\\b' 'a\\\nb'", ['cmd', 'a\\b', 'a\\\nb']);
    accepted('cmd \\$HOME \\* \\~ \\# \\! \\| \\\\', ['cmd', '$HOME', '*', '~', '#', '!', '|', '\\']);
  });

  it('removes backslash-newline outside single quotes, even inside a word or name', () => {
    accepted('cmd a\\\nb \\\n c', ['cmd', 'ab', 'c']);
    accepted('FO\\\nO=1 cmd', ['cmd'], { FOO: '1' });
    accepted('cmd a\\\n#b', ['cmd', 'a#b']);
    accepted('cmd x\\\n', ['cmd', 'x']);
  });

  it('takes leading NAME=value words as the environment', () => {
    accepted("FOO=bar BAZ='q x' cmd arg", ['cmd', 'arg'], { FOO: 'bar', BAZ: 'q x' });
    accepted('A=1 A=2 _b9= cmd', ['cmd'], { A: '2', _b9: '' });
    accepted('A="x y"z=w cmd', ['cmd'], { A: 'x yz=w' });
    accepted('cmd a=b', ['cmd', 'a=b']);
    accepted('A=1 cmd B=2', ['cmd', 'B=2'], { A: '1' });
    // A plain object would have swallowed this one into its prototype.
    accepted('__proto__=x cmd', ['cmd'], Object.fromEntries([['__proto__', 'x']]));
  });

  it('does not take quoted, escaped or invalid names as assignments', () => {
    accepted('"A"=1 x', ['A=1', 'x']);
    accepted('A\\=1 x', ['A=1', 'x']);
    accepted('1A=1 x', ['1A=1', 'x']);
    accepted('A-B=1 x', ['A-B=1', 'x']);
    accepted('=1 x', ['=1', 'x']);
    accepted('\\A=1 x', ['A=1', 'x']);
  });

  it('leaves tildes, hashes and bangs alone where the shell does', () => {
    accepted('cmd a~ a=~ x:~ "~" a#b !x x!', ['cmd', 'a~', 'a=~', 'x:~', '~', 'a#b', '!x', 'x!']);
    accepted('cmd a] ]', ['cmd', 'a]', ']']);
  });

  it('leaves a tilde-prefix with a colon alone, as dash does (Nagios ranges, issue 12)', () => {
    accepted('check_snmp -w ~:20 -c ~:30', ['check_snmp', '-w', '~:20', '-c', '~:30']);
    accepted('cmd ~foo:bar ~root:x ~:a/b ~:', ['cmd', '~foo:bar', '~root:x', '~:a/b', '~:']);
    accepted("cmd ~:'a b' ~:~", ['cmd', '~:a b', '~:~']);
    // The prefix ends at the first `/`: `~/:x` is $HOME/:x.
    refused('cmd ~/:x', ['tilde']);
    refused('cmd ~root', ['tilde']);
    // In assignments the prefix ends at `:`, so these are $HOME.
    refused('a=~:x cmd', ['tilde']);
    refused('x=~/y cmd', ['tilde']);
    refused('b=x:~/q cmd', ['tilde']);
    // Quoted or escaped prefixes are not looked into: refused, to be safe.
    refused("cmd ~'a':b", ['tilde']);
  });

  it('takes a backslash before a tab as a literal tab (Nagios command-line tests)', () => {
    accepted('\\ \t \\\t  \\ ', [' ', '\t', ' ']);
    accepted('cmd a\\\tb \\\t', ['cmd', 'a\tb', '\t']);
  });

  it('passes non-ASCII through, including bytes dash uses internally', () => {
    // ā is C4 81 and Ĉ is C4 88 in UTF-8: 0x81-0x88 are dash's CTL* markers.
    accepted('cmd é 日本 ā "Ĉ" \'ā\' \\é', ['cmd', 'é', '日本', 'ā', 'Ĉ', 'ā', 'é']);
    accepted('Ā=ā cmd', ['Ā=ā', 'cmd']);
  });
});

describe('parseCommand: what needs a shell', () => {
  it('names each construct once, in a fixed order', () => {
    refused('cmd $HOME', ['variable']);
    refused('a && b; c & d', ['background']);
    refused('a > b 2>&1 >> c < d << e <<- f >| g <> h <&0', ['here-document']);
    refused('a\nb', ['newline']);
    refused('cmd\n', ['newline']);
    refused('cmd ${HOME} $1 $@ $* $# $? $$ $! $- $ $\'x\' "$"', ['variable']);
    refused('cmd "a $x"', ['variable']);
    refused('cmd $(date) `date` "`date`" "$(date)"', ['command substitution']);
    refused('cmd $((1 + 2))', ['arithmetic']);
    refused('ls *.txt', ['glob']);
    refused('ls a? [ab]', ['glob']);
    refused('ls ~ ~root/x', ['tilde']);
    refused('A=~ cmd', ['tilde']);
    refused('A=x:~/bin cmd', ['tilde']);
    refused('cmd # comment', ['comment']);
    refused('(cmd)', ['subshell']);
    refused('cmd a{b,c}', ['brace']);
    refused('{ cmd; }', ['brace']);
    refused('! cmd', ['history']);
    refused('!cmd', ['history']);
    refused("'abc", ['unbalanced quote']);
    refused('"abc', ['unbalanced quote']);
    refused('"abc\\"', ['unbalanced quote']);
    refused('cmd `date', ['command substitution', 'unbalanced quote']);
    refused('cmd a\\', ['trailing backslash']);
    refused('cmd a\rb', ['control character']);
    refused('cmd \\\x07', ['control character']);
    refused('cmd a\u0085', ['control character']);
    refused('cd /tmp', ['builtin']);
    refused('if x', ['reserved word']);
    refused('', ['empty command']);
    refused(' \t ', ['empty command']);
    refused('A=1 B=2', ['empty command']);
    refused('# only a comment', ['comment', 'empty command']);
    refused('cat *.log | grep -v x > out; wc $? &', ['variable', 'glob', 'background']);
    refused('a | | b', ['pipe']);
    refused('a >', ['redirection']);
    refused('a >&12', ['redirection']);
    refused('a >&file', ['redirection']);
    refused('a && || b', ['command list']);
    refused('; a', ['command list']);
    refused('a;; b', ['command list']);
    refused('a <<EOF', ['here-document']);
    refused('A=1 | b', ['empty command']);
  });

  it('does not report what sits inside $(…), ${…} and backquotes', () => {
    refused('cmd $(ls | wc -l > x; (a))', ['command substitution']);
    refused('cmd ${x:-{}} "$(a ")")"', ['variable', 'command substitution']);
    refused('cmd `ls | *`', ['command substitution']);
  });

  it('keeps quoted and double-quoted metacharacters literal', () => {
    accepted("cmd '*.txt' '$HOME' '|' ';' '&' '<' '>' '(' ')' '{' '}' '~' '#' '!' '\n'",
      ['cmd', '*.txt', '$HOME', '|', ';', '&', '<', '>', '(', ')', '{', '}', '~', '#', '!', '\n']);
    accepted('cmd "*" "|;&<>(){}~#!\n" "\\$x"', ['cmd', '*', '|;&<>(){}~#!\n', '$x']);
  });

  const reserved = ['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'case', 'esac', 'while',
    'until', 'for', 'in', 'function', 'select', 'time', ']]'];
  it('refuses reserved words and dash built-ins as the command word', () => {
    for (const w of reserved) {
      refused(`${w} x`, ['reserved word']);
      refused(`A=1 '${w}' x`, ['reserved word']);
    }
    refused('[[ -f x ]]', ['glob', 'reserved word']);
    // Quoted, these three are plain command names to dash (unquoted they are 'brace' and 'history').
    accepted("'{' x", ['{', 'x']);
    accepted("'}' x", ['}', 'x']);
    accepted("'!' x", ['!', 'x']);
    for (const w of DASH_BUILTINS) {
      refused(`A=1 "${w}"`, ['builtin']);
      refused(`'${w}' x`, ['builtin']);
    }
    // Only the command word matters.
    accepted('cmd if cd exit', ['cmd', 'if', 'cd', 'exit']);
  });

  it('describes pipelines, redirections and lists in `list`, in the order written', () => {
    const p = parseCommand('A=1 a x 2>&1 >>out | b "y z" <in 3>&- && c || d; e;');
    expect(p.needsShell).toBe(false);
    expect(p.simple).toBe(false);
    expect({ argv: p.argv, env: p.env }).toEqual({ argv: ['a', 'x'], env: { A: '1' } });
    expect(p.list).toEqual([
      { op: ';', stages: [
        { argv: ['a', 'x'], env: { A: '1' }, redirects: [{ fd: 2, op: '>&', target: '1' }, { fd: 1, op: '>>', target: 'out' }] },
        { argv: ['b', 'y z'], env: {}, redirects: [{ fd: 0, op: '<', target: 'in' }, { fd: 3, op: '>&', target: '-' }] },
      ] },
      { op: '&&', stages: [{ argv: ['c'], env: {}, redirects: [] }] },
      { op: '||', stages: [{ argv: ['d'], env: {}, redirects: [] }] },
      { op: ';', stages: [{ argv: ['e'], env: {}, redirects: [] }] },
    ]);
    // One digit right before the operator is its fd; more digits, a quoted or a spaced one are words (dash).
    expect(parseCommand('a 12>f').list[0].stages[0]).toEqual({ argv: ['a', '12'], env: {}, redirects: [{ fd: 1, op: '>', target: 'f' }] });
    expect(parseCommand('a "2">f 2 >g').list[0].stages[0].argv).toEqual(['a', '2', '2']);
    // Redirections before the command word, and targets that look like assignments.
    expect(parseCommand('>f B=2 cmd >A=1').list[0].stages[0])
      .toEqual({ argv: ['cmd'], env: { B: '2' }, redirects: [{ fd: 1, op: '>', target: 'f' }, { fd: 1, op: '>', target: 'A=1' }] });
    expect(parseCommand('a >| f <> g 0<&3 >& 2').list[0].stages[0].redirects).toEqual([
      { fd: 1, op: '>|', target: 'f' }, { fd: 0, op: '<>', target: 'g' }, { fd: 0, op: '<&', target: '3' }, { fd: 1, op: '>&', target: '2' },
    ]);
  });

  it('checks the first word of every command, best effort', () => {
    expect(parseCommand('a; cd x').reasons).toEqual(['builtin']);
    expect(parseCommand('a | if x').reasons).toEqual(['reserved word']);
    expect(parseCommand('a && echo x').reasons).toEqual(['builtin']);
  });
});

/** What /bin/sh -c makes of a command, in the environment exec gives its children. */
function shellResult(command: string): { stdout: string; stderr: string; exitCode: number | null } {
  const r = spawnSync('/bin/sh', ['-c', '--', command], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 });
  return { stdout: r.stdout, stderr: r.stderr, exitCode: r.status };
}

async function execResult(command: string): Promise<{ stdout: string; stderr: string; exitCode: number | null }> {
  const r = await exec(command, { shell: 'auto', reject: false });
  expect(r.viaShell).toBe(true);
  return { stdout: String(r.stdout), stderr: String(r.stderr), exitCode: r.exitCode };
}

// Issue 17 item 9: these were accepted and ran /usr/bin's program, which
// does something else than the built-in dash runs for `sh -c`.
describe('parseCommand: dash built-ins are not the programs of the same name', () => {
  it('echo "a\\nb": dash\'s echo expands the escape, /bin/echo does not', async () => {
    const command = 'echo "a\\nb"';
    const parsed = parseCommand(command);
    expect(parsed.needsShell).toBe(true);
    expect(parsed.reasons).toContain('builtin');
    await expect(exec(command)).rejects.toBeInstanceOf(ShellSyntaxError);
    const sh = shellResult(command);
    expect(sh).toEqual({ stdout: 'a\nb\n', stderr: '', exitCode: 0 });
    expect(await execResult(command)).toEqual(sh);
  });

  it('printf -w 80: dash\'s printf refuses the option, /usr/bin/printf prints it', async () => {
    const command = 'printf -w 80';
    expect(parseCommand(command).reasons).toEqual(['builtin']);
    const sh = shellResult(command);
    expect(sh.exitCode).toBe(2);
    expect(await execResult(command)).toEqual(sh);
  });

  it('true --help: dash\'s true prints nothing, /bin/true prints its usage', async () => {
    const command = 'true --help';
    expect(parseCommand(command).reasons).toEqual(['builtin']);
    const sh = shellResult(command);
    expect(sh).toEqual({ stdout: '', stderr: '', exitCode: 0 });
    expect(await execResult(command)).toEqual(sh);
    // Not even bare, or after assignments: PATH decides which `true` a program gets.
    expect(parseCommand('true').reasons).toEqual(['builtin']);
    expect(parseCommand('A=1 false').reasons).toEqual(['builtin']);
  });

  it('refuses every dash built-in however its name is spelled; dash never runs the PATH program', () => {
    const spellings = (name: string) => [name, `'${name}'`, `"${name}"`, `\\${name}`, `A=1 ${name}`];
    for (const name of DASH_BUILTINS) {
      // PATH holds the printer under this name: if dash ran it, its argv would come out.
      if (name !== '.') {
        const link = path.join(binDir, name);
        if (!fs.existsSync(link)) fs.symlinkSync(printer, link);
      }
      for (const spelled of spellings(name)) {
        const command = `${spelled} arg`;
        const parsed = parseCommand(command);
        expect({ command, builtin: parsed.reasons.includes('builtin') }).toEqual({ command, builtin: true });
        const out = spawnSync('/bin/sh', ['-c', '--', command], {
          env: { PATH: binDir, HOME: SHELL_HOME }, cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000,
        }).stdout.toString('utf8');
        expect({ command, ranProgram: out.startsWith(`2\0${name}\0arg\0`) }).toEqual({ command, ranProgram: false });
      }
    }
  });

  it('accepts a built-in\'s name reached by a path: dash runs the file', async () => {
    for (const name of DASH_BUILTINS) {
      if (name === '.') continue; // `/bin/.` is the directory
      // The printer under the name, by path: exactly the argv sh -c gives it.
      // Quoted, since an unquoted `[` is a glob.
      const link = path.join(binDir, name);
      if (!fs.existsSync(link)) fs.symlinkSync(printer, link);
      expect(plain(parseCommand(`'${link}' arg`))).toEqual({ argv: [link, 'arg'], env: {}, needsShell: false, reasons: [], simple: true });
      expect(runShell(`'${link}' arg`).argv).toEqual([link, 'arg']);
      // And the real file of that name, where there is one: the same result as sh -c.
      const bin = `'/bin/${name}' arg`;
      expect(parseCommand(bin).needsShell).toBe(false);
      if (fs.existsSync(`/bin/${name}`)) {
        const r = await exec(bin, { reject: false });
        expect(r.viaShell).toBe(false);
        expect({ bin, stdout: String(r.stdout), stderr: String(r.stderr), exitCode: r.exitCode })
          .toEqual({ bin, ...shellResult(bin) });
      }
    }
  });
});

describe('parseCommand: bad input', () => {
  it('throws TypeError for non-strings and NUL bytes', () => {
    for (const bad of [undefined, null, 1, ['ls'], {}, Buffer.from('ls')]) {
      expect(() => parseCommand(bad as unknown as string)).toThrow(TypeError);
    }
    expect(() => parseCommand('ls\0-l')).toThrow(TypeError);
  });
});

// The alphabet of the generated commands: every character with a meaning to
// the shell, ordinary ones, and non-ASCII (with dash's internal bytes in ā, Ĉ).
const PLAIN = [...'abcxyzAXZ019=_-./%,:@]', 'é', '日', 'ā', 'Ĉ'];
const META = [' ', '\t', '\n', "'", '"', '\\', '$', '`', '|', '&', ';', '<', '>', '(', ')',
  '{', '}', '*', '?', '[', '~', '#', '!'];
const anyChar = fc.constantFrom(...PLAIN, ...META);
const plainChar = fc.constantFrom(...PLAIN);
const mostlyPlainChar = fc.oneof({ arbitrary: plainChar, weight: 6 }, { arbitrary: anyChar, weight: 1 });

const piece = fc.oneof(
  { arbitrary: fc.string({ unit: mostlyPlainChar, minLength: 1, maxLength: 6 }), weight: 5 },
  { arbitrary: fc.string({ unit: anyChar.filter((c) => c !== "'"), maxLength: 6 }).map((t) => `'${t}'`), weight: 2 },
  {
    arbitrary: fc.array(fc.oneof(
      { arbitrary: anyChar.filter((c) => !'"\\$`'.includes(c)), weight: 6 },
      { arbitrary: anyChar.map((c) => `\\${c}`), weight: 2 },
      { arbitrary: fc.constantFrom('$', '`'), weight: 1 },
    ), { maxLength: 6 }).map((a) => `"${a.join('')}"`),
    weight: 2,
  },
  { arbitrary: anyChar.map((c) => `\\${c}`), weight: 2 },
  { arbitrary: fc.constantFrom('\\\n', "''", '""'), weight: 1 },
  // Tilde-prefixes with and without a colon (Nagios ranges like `~:20`) and
  // escaped tabs (issue 12): the accepted ones must match dash too.
  { arbitrary: fc.constantFrom('~:', '~:20', '~a:b', '~/:', '~root:x', '~', '\\\t', '~:\\\t'), weight: 1 },
);
const word = fc.array(piece, { minLength: 1, maxLength: 4 }).map((a) => a.join(''));
const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,4}$/);
// Mostly real assignments; some with a stray character that makes them words.
const assignment = fc
  .tuple(name, fc.oneof({ arbitrary: fc.constant(''), weight: 4 }, anyChar, piece), fc.array(piece, { maxLength: 3 }))
  .map(([n, stray, value]) => `${n}${stray}=${value.join('')}`);
const blanks = fc.constantFrom(' ', '\t', '  ', ' \t', ' \\\n ', '\\\n ');
const maybeBlanks = fc.oneof(fc.constant(''), blanks);
const commandWord = fc.oneof(fc.constant('printargs'), word);

/** Commands shaped like real ones: assignments, a command word, arguments. */
const structured = fc
  .tuple(maybeBlanks, fc.array(assignment, { maxLength: 2 }), commandWord,
    fc.array(fc.tuple(blanks, word), { maxLength: 5 }), maybeBlanks)
  .map(([lead, assigns, cmd, args, trail]) =>
    lead + assigns.map((a) => `${a} `).join('') + cmd + args.map(([b, w]) => b + w).join('') + trail);

/** Anything at all over the alphabet. */
const free = fc.string({ unit: mostlyPlainChar, maxLength: 24 });

function checkShape(parsed: ParsedCommand): void {
  expect(parsed.needsShell).toBe(parsed.reasons.length > 0);
  expect(new Set(parsed.reasons).size).toBe(parsed.reasons.length);
  for (const r of parsed.reasons) expect(REASON_NAMES).toContain(r);
  if (!parsed.needsShell) expect(parsed.argv.length).toBeGreaterThan(0);
}

// NOSHELL_PROPERTY_RUNS=20000 for a longer hunt; the default 600 takes ~2 s.
const propertyScale = Number(process.env.NOSHELL_PROPERTY_RUNS ?? 600) / 600;

describe('parseCommand: property, against /bin/sh', () => {
  const timeout = 60_000 * Math.max(1, propertyScale);
  it('agrees with /bin/sh on every generated command it accepts', { timeout }, () => {
    let compared = 0;
    let runs = 0;
    const property = (command: string) => {
      runs++;
      const parsed = parseCommand(command);
      checkShape(parsed);
      // Pipelines, lists and redirections: the differential suite (test/process/pipeline-differential.test.ts).
      if (!parsed.needsShell && parsed.simple && matchesShell(command, parsed)) compared++;
    };
    fc.assert(fc.property(structured, property), { numRuns: Math.round(350 * propertyScale) });
    fc.assert(fc.property(free, property), { numRuns: Math.round(250 * propertyScale) });
    // The property means little if almost everything was refused.
    expect(compared).toBeGreaterThan(runs / 4);
    if (process.env.NOSHELL_PROPERTY_RUNS) console.log(`compared ${compared} of ${runs} with /bin/sh`);
  });

  it('gives back any argv quoted with single quotes (no shell needed)', () => {
    fc.assert(fc.property(fc.array(fc.string({ unit: anyChar }), { minLength: 1, maxLength: 6 }), (argv) => {
      const quoted = ['printargs', ...argv].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
      expect(plain(parseCommand(quoted))).toEqual({ argv: ['printargs', ...argv], env: {}, needsShell: false, reasons: [], simple: true });
    }), { numRuns: 1000 });
  });
});
