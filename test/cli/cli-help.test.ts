// Issue 20: every command has real help — `--help`/`-h` and `noshell help
// <command>` print the usage and each option with its meaning to stdout and
// exit 0; an unknown command or option says which and exits 2 (`noshell
// check` 3: a plugin's usage error is UNKNOWN, 2 would read as CRITICAL).
// Help needs no addon: it is answered before one is loaded.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const COMMANDS = ['check', 'run', 'bench', 'gearman-worker', 'gearman-submit', 'build-addon'];

function cli(args: string[], cli = CLI) {
  return spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 30_000 });
}

let tmp: string | undefined;
afterAll(() => {
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
});

describe('noshell help', () => {
  it('--help, -h, help and no command: the overview on stdout, every command listed, exit 0', () => {
    const outputs = [['--help'], ['-h'], ['help'], []].map((a) => cli(a));
    for (const r of outputs) {
      expect(r.status).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe(outputs[0].stdout);
    }
    expect(outputs[0].stdout).toMatch(/^usage: noshell <command> \[options\]\n/);
    for (const c of COMMANDS) expect(outputs[0].stdout).toMatch(new RegExp(`^  ${c} +\\S`, 'm'));
  });

  for (const c of COMMANDS) {
    it(`${c}: --help, -h and help ${c} print its usage and one line per option to stdout, exit 0`, () => {
      const [long, short, viaHelp] = [[c, '--help'], [c, '-h'], ['help', c]].map((a) => cli(a));
      for (const r of [long, short, viaHelp]) {
        expect(r.status, r.stderr).toBe(0);
        expect(r.stderr).toBe('');
        expect(r.stdout).toBe(long.stdout);
      }
      const text = long.stdout;
      expect(text).toMatch(new RegExp(`^usage: noshell ${c}`));
      const options = text.slice(text.indexOf('\noptions:\n') + 10).split('\n\n')[0].split('\n').filter((l) => l !== '');
      expect(options.length).toBeGreaterThan(1);
      // Each option on its own line with its meaning after it (a long one: on the next line).
      for (let i = 0; i < options.length; i++) {
        const line = options[i];
        expect(line, line).toMatch(/^ {2,4}\S/); // sub-options indented
        if (!/^ {2,4}\S.*\S {2,}\S/.test(line)) expect(options[++i], line).toMatch(/^ {20,}\S/);
      }
      expect(text).toContain('-h, --help');
      for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(200);
    });
  }

  it('what the options say matches what the commands accept (each long option of the help is parsed, not refused as unknown)', () => {
    // A sample per command: an option from its help, given a bad value, is refused for the value, not as unknown.
    expect(cli(['run', '--format', 'yaml', 'x.json']).stderr).toContain('--format must be json or text, got "yaml"');
    expect(cli(['check', '--timeout-state', '9', '--', '/bin/true']).stdout).toContain('--timeout-state must be a state: 0-3, or OK, WARNING, CRITICAL or UNKNOWN, got "9"');
    expect(cli(['check', '--format', 'xml', '--', '/bin/true']).stdout).toContain('--format must be text or json, got "xml"');
    expect(cli(['bench', '--gearman', '--jobs', '0']).stderr).toContain('--jobs needs a positive integer');
    expect(cli(['bench', '--vs-nagios', '--services', '0']).stderr).toContain('--services must be a positive integer');
    // Refused before Nagios is looked for: a bare 50 would be 50 s.
    expect(cli(['bench', '--vs-nagios', '--tick', '50']).stderr).toContain('--tick must be 0, or a duration with a unit from 1ms to 60s (50ms, 1s), got "50"');
    expect(cli(['bench', '--scale', '--sizes', '1000,0']).stderr).toContain('--sizes must be a positive integer');
  });

  it('an unknown command: says which on stderr, exit 2; help for an unknown command too', () => {
    for (const args of [['frobnicate'], ['help', 'frobnicate']]) {
      const r = cli(args);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^noshell: unknown command "frobnicate"\n/);
    }
  });

  it('an unknown option: says which, exit 2 (check: UNKNOWN, 3)', () => {
    const cases: Array<[string[], number, string]> = [
      [['run', '--frob', 'x.json'], 2, '--frob'],
      [['bench', '--frob'], 2, '"--frob"'],
      [['bench', '--gearman', '--frob'], 2, '--frob'],
      [['bench', '--scale', '--frob'], 2, '--frob'],
      [['gearman-worker', '--server=127.0.0.1:1', '--encryption=no', '--frob=1'], 2, 'frob'],
      [['gearman-submit', '--server=127.0.0.1:1', '--encryption=no', '--frob=1'], 2, 'frob'],
      [['build-addon', '--frob'], 2, '"--frob"'],
      [['check', '--frob', '--', '/bin/true'], 3, '--frob'],
    ];
    for (const [args, code, named] of cases) {
      const r = cli(args);
      expect(r.status, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(code);
      expect(r.stdout + r.stderr, args.join(' ')).toContain(named);
    }
  });

  // An operator's first day: each message names the option, what it takes and what was given,
  // once, in noshell's words (not node:util's "ambiguous", not the library's API names).
  it('a bad value is named with what the option takes; said once (check: on stdout, the usage on stderr)', () => {
    const cases: Array<[string[], number, string]> = [
      [['check', '--timeout', '-1', '--', '/bin/true'], 3, '--timeout must be a duration of 0 or more, got "-1"'],
      [['check', '--timeout=abc', '--', '/bin/true'], 3, '--timeout must be a duration: seconds (10), or with a unit (500ms, 10s, 2m), got "abc"'],
      [['check', '--timeout'], 3, '--timeout needs a value'],
      [['check', '--command', ''], 3, '--command must be a command string that runs a program, got ""'],
      [['check', '--command', 'A=b'], 3, '--command must be a command string that runs a program, got "A=b"'],
      [['check', '--shell', 'sometimes', '--command', 'true'], 3, '--shell must be false, auto or true, got "sometimes"'],
      [['check', '--frob', '--', '/bin/true'], 3, 'unknown option "--frob"'],
      [['run', '--metrics-port', 'abc', 'x.json'], 2, '--metrics-port must be a port number, 0-65535 (0: any free port), got "abc"'],
      [['run', '--metrics-port=70000', 'x.json'], 2, 'got "70000"'],
      [['run', '--concurrency', '0', 'x.json'], 2, '--concurrency must be a whole number of checks, 1 or more, got "0"'],
      [['run', '--tick', '-1', 'x.json'], 2, '--tick must be 0, or a duration with a unit from 1ms to 60s (50ms, 1s), got "-1"'],
      [['run', '--tick', '50', 'x.json'], 2, 'got "50"'],
      [['run', '--tick=2m', 'x.json'], 2, 'got "2m"'],
      [['run', '--tick', '0.5ms', 'x.json'], 2, 'got "0.5ms"'],
      [['run', '--tick', 'soon', 'x.json'], 2, 'got "soon"'],
      [['run', '--metrics-host', '::1', 'x.json'], 2, '--metrics-host needs --metrics-port'],
      [['run', 'a.json', 'b.json'], 2, 'one checks file, got a second: "b.json"'],
      [['run', '--allow-root=yes', 'x.json'], 2, '--allow-root takes no value'],
      [['run'], 2, 'no checks file'],
    ];
    for (const [args, code, said] of cases) {
      const r = cli(args);
      expect(r.status, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(code);
      const all = r.stdout + r.stderr;
      expect(all, args.join(' ')).toContain(said);
      // Once: the reason is not repeated, and nothing of node:util's or the API's wording.
      expect(all.split(said).length, all).toBe(2);
      expect(all).not.toMatch(/ambiguous|runCheck:|Unknown option/);
      expect(r.stderr).toContain('usage: noshell');
    }
  });

  it('--timeout-state takes the state names, as checks files do', () => {
    const r = cli(['check', '--timeout', '0.2', '--timeout-state', 'CRITICAL', '--', '/bin/sleep', '5']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('CRITICAL - Check timed out after 0.2 s\n');
    expect(cli(['check', '--timeout', '0.2', '--timeout-state=warning', '--', '/bin/sleep', '5']).status).toBe(1);
    expect(cli(['check', '--timeout', '0.2', '--timeout-state', '0', '--', '/bin/sleep', '5']).status).toBe(0);
  });

  it('--help after -- belongs to the plugin: noshell check runs it', () => {
    const r = cli(['check', '--', process.execPath, '-e', 'console.log(process.argv.slice(1).join(" ") || "none")', '--', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('--help\n');
  });

  it('help and --version work where no addon loads (a copy without one)', () => {
    tmp ??= mkdtempSync(path.join(os.tmpdir(), 'noshell-help-'));
    cpSync(path.join(ROOT, 'dist'), path.join(tmp, 'dist'), { recursive: true });
    cpSync(path.join(ROOT, 'package.json'), path.join(tmp, 'package.json'));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(tmp, 'node_modules'));
    const bare = path.join(tmp, 'dist', 'cli.js');
    expect(cli(['--help'], bare)).toMatchObject({ status: 0, stdout: cli(['--help']).stdout });
    expect(cli(['check', '--help'], bare)).toMatchObject({ status: 0, stdout: cli(['check', '--help']).stdout });
    expect(cli(['--version'], bare).status).toBe(0);
    // A command that needs the addon says why it cannot start, without a stack.
    const r = cli(['run', '--check', 'x.json'], bare);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^noshell: cannot load its native addon/);
    expect(r.stderr.split('\n').some((l) => l.trimStart().startsWith('at '))).toBe(false); // no stack
  });
});

describe('counts in messages', () => {
  it('1 check, 1 result, 1 job: the noun agrees with the number', async () => {
    const { countOf } = await import('../../src/util/count-text');
    expect(countOf(1, 'check')).toBe('1 check');
    expect(countOf(0, 'check')).toBe('0 checks');
    expect(countOf(2, 'result')).toBe('2 results');
    expect(countOf(1, 'box', 'boxes')).toBe('1 box');
    expect(countOf(3, 'box', 'boxes')).toBe('3 boxes');
  });
});
