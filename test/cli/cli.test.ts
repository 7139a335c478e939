import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBE } from '../helpers';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const PLUGINS = '/usr/lib/nagios/plugins';
let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-cli-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function cli(...args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
}

/** cli() for the bench smoke test: its own, longer deadline. */
function cliSlow(timeout: number, ...args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout });
}

describe('noshell check', () => {
  it('--rlimit, --nice and --cgroup: the plugin sees them; a limit that cannot be set is UNKNOWN and nothing runs', () => {
    const r = cli('check', '--rlimit', 'nofile=12:13,as=1G', '--nice', '4', '--',
      '/bin/sh', '-c', 'echo "OK - $(ulimit -S -n) $(ulimit -H -n) $(ulimit -v) $(nice)"');
    expect(r.stdout).toBe('OK - 12 13 1048576 4\n');
    expect(r.status).toBe(0);
    const touched = path.join(tmp, `limited-${process.pid}`);
    const refused = cli('check', '--cgroup', tmp, '--', '/bin/touch', touched);
    expect(refused.status).toBe(3);
    expect(refused.stdout).toContain('ENOTSUP: not a cgroup v2 directory');
    expect(existsSync(touched)).toBe(false);
    // Repeated --rlimit adds up; the last --nice wins as for every other option.
    const twice = cli('check', '--rlimit', 'nofile=55', '--rlimit=core=0', '--', '/bin/sh', '-c', 'echo "OK - $(ulimit -n) $(ulimit -c)"');
    expect(twice.stdout).toBe('OK - 55 0\n');
    for (const [option, value] of [
      ['--rlimit', 'nofile=2:1'], ['--rlimit', 'bogus=1'], ['--rlimit', '__proto__=1:2'], ['--nice', '-21'], ['--nice', ''],
      ['--nice', '0x0a'], ['--nice', '1e1'], ['--cgroup', 'rel'],
    ]) {
      const bad = cli('check', option, value, '--', '/bin/touch', touched);
      expect(bad.status).toBe(3);
      expect(bad.stdout).toMatch(new RegExp(`^UNKNOWN - noshell check: ${option} must be `));
      expect(existsSync(touched)).toBe(false);
    }
  });

  it.runIf(existsSync(`${PLUGINS}/check_dummy`))('prints the plugin line and exits with its state', () => {
    for (const code of [0, 1, 2, 3]) {
      const r = cli('check', '--', `${PLUGINS}/check_dummy`, String(code), 'text here');
      expect(r.status).toBe(code);
      expect(r.stdout).toBe(`${['OK', 'WARNING', 'CRITICAL', 'UNKNOWN'][code]}: text here\n`);
    }
  });

  it('--command takes a command string; perfdata and long output come back', () => {
    const plugin = path.join(tmp, 'check_fine');
    writeFileSync(plugin, `#!/bin/sh\necho "OK - fine | 'a b'=1s;2;3;0; c=U"\necho "detail $1"\nexit 0\n`, { mode: 0o755 });
    for (const args of [['--command', `${plugin} 'for you'`], [`--command=${plugin} 'for you'`]]) {
      const r = cli('check', ...args);
      expect(r.status).toBe(0);
      // As the plugin wrote it (the trailing `;` too): Nagios passes it on unchanged (issue 20).
      expect(r.stdout).toBe("OK - fine | 'a b'=1s;2;3;0; c=U\ndetail for you\n");
    }
  });

  it('shell injection through one word after -- (it was a command string run with shell auto): it is a program name now', () => {
    const touched = path.join(tmp, `injected-${process.pid}-${Date.now()}`);
    const r = cli('check', '--', `/bin/echo OK; touch ${touched}`);
    expect(existsSync(touched)).toBe(false);
    expect(r.status).toBe(3);
    expect(r.stdout).toBe(`UNKNOWN - Could not run plugin /bin/echo OK; touch ${touched}: ENOENT ` +
      `(spawn /bin/echo OK; touch ${touched} ENOENT: no such file or directory at execve)\n`);
    expect(r.stderr).toContain('after -- comes an argv');
    // One word is a one-element argv: the program, run without a shell.
    const one = cli('check', '--', '/bin/true');
    expect(one.status).toBe(0);
    expect(one.stdout).toBe('(No output on stdout)\n');
  });

  it('--command needs --shell for shell syntax: UNKNOWN naming it without, run with --shell auto', () => {
    const touched = path.join(tmp, `shell-${process.pid}-${Date.now()}`);
    const refused = cli('check', '--command', `/bin/echo OK $HOME | /bin/cat; touch ${touched}`);
    expect(refused.status).toBe(3);
    expect(refused.stdout).toBe('UNKNOWN - Check command needs a shell (variable) and shell is false\n');
    expect(refused.stderr).toContain('--shell auto');
    expect(existsSync(touched)).toBe(false);
    const piped = cli('check', '--shell', 'auto', '--command', '/bin/echo OK - $NOSHELL_UNSET piped | /bin/cat');
    expect(piped.status).toBe(0);
    expect(piped.stdout).toBe('OK - piped\n');
    // A pipeline and a list need no shell at all.
    const free = cli('check', '--command', `/bin/echo OK - no shell | /bin/cat && /usr/bin/touch ${touched}`);
    expect(free.status).toBe(0);
    expect(free.stdout).toBe('OK - no shell\n');
    expect(existsSync(touched)).toBe(true);
    expect(cli('check', '--shell=true', '--command=exit 2').status).toBe(2);
  });

  it('bad combinations are usage errors (UNKNOWN, exit 3)', () => {
    for (const args of [
      ['--command', 'true', '--', 'true'], // both
      ['--shell', 'auto', '--', '/bin/true'], // --shell with an argv
      ['/bin/true'], // no --
      ['--timeout', '5', '/bin/true', '--', '/bin/true'], // stray word before --
      ['--frobnicate', '--', '/bin/true'],
      ['--shell', 'maybe', '--command', 'true'],
      ['--timeout-state', '4', '--', '/bin/true'],
      ['--'],
    ]) {
      const r = cli('check', ...args);
      expect(r.status, args.join(' ')).toBe(3);
      expect(r.stdout, args.join(' ')).toMatch(/^UNKNOWN - noshell check: /);
      expect(r.stderr, args.join(' ')).toContain('usage: noshell check');
    }
  });

  it('timeouts and spawn errors are UNKNOWN (3) with a message', () => {
    const t = cli('check', '--timeout', '0.2', '--', 'sleep', '5');
    expect(t.status).toBe(3);
    expect(t.stdout).toBe('UNKNOWN - Check timed out after 0.2 s\n');
    const c = cli('check', '--timeout', '0.2', '--timeout-state', '2', '--', 'sleep', '5');
    expect(c.status).toBe(2);
    const e = cli('check', '--', '/nonexistent/check_x');
    expect(e.status).toBe(3);
    expect(e.stdout).toMatch(/^UNKNOWN - Could not run plugin \/nonexistent\/check_x: ENOENT/);
  });

  it('internal errors are UNKNOWN too, never a WARNING exit code', () => {
    const r = cli('check', '--timeout', '9999999', '--', '/bin/true');
    expect(r.status).toBe(3);
    expect(r.stdout).toMatch(/^UNKNOWN - noshell check: /);
  });

  it('bad usage exits 3 with the usage on stderr', () => {
    const r = cli('check', '--timeout');
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('usage: noshell check');
    expect(cli('check').status).toBe(3);
    expect(cli('frobnicate').status).toBe(2);
  });
});

/** `noshell run` with these arguments: its stdout and stderr as they come, and its exit code. */
function startRun(args: string[]) {
  const child = spawn(process.execPath, [CLI, 'run', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const io = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => (io.stdout += d));
  child.stderr.on('data', (d) => (io.stderr += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, io, exited };
}

describe('noshell run', () => {
  it('prints JSON lines, serves metrics, stops cleanly on SIGTERM', async () => {
    const file = path.join(tmp, 'checks.json');
    writeFileSync(file, JSON.stringify({
      concurrency: 4,
      defaults: { timeout: '5s' },
      checks: [
        { id: 'ok', command: [PROBE, 'exit', '0'], interval: '100ms' },
        { id: 'warn', command: `${PROBE} exit 1`, interval: 100 },
      ],
    }));
    const { child, io, exited } = startRun([file, '--metrics-port', '0', '--allow-root']);
    const deadline = Date.now() + 10_000;
    while ((io.stdout.match(/\n/g) ?? []).length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const port = Number(/127\.0\.0\.1:(\d+)\/metrics/.exec(io.stderr)?.[1]);
    const metrics = await new Promise<string>((resolve, reject) => {
      execFile('curl', ['-s', `http://127.0.0.1:${port}/metrics`], (e, out) => (e ? reject(e) : resolve(out)));
    }).catch(async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
    child.kill('SIGTERM');
    // 128 + SIGTERM, as for a process ended by the signal.
    expect(await exited).toBe(143);
    const { stdout, stderr } = io;
    const lines = stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThanOrEqual(6);
    expect(new Set(lines.map((l) => l.id))).toEqual(new Set(['ok', 'warn']));
    expect(lines.find((l) => l.id === 'warn')).toMatchObject({ state: 1, stateName: 'WARNING', viaShell: false });
    expect(metrics).toMatch(/^noshell_check_results_total\{state="OK"\} [1-9]\d*$/m);
    expect(stderr).toContain('SIGTERM, stopping');
    // When the last first run comes: the longest interval, here 100 ms.
    expect(stderr).toContain(`noshell run: 2 checks from ${file}; first runs spread over each check's interval, the last within 100 ms; a tick of 50 ms\n`);
  });

  it("a file's tick starts checks due between ticks at the next one; --tick wins; a reload's new tick is kept for the restart", async () => {
    /** Runs `file` until every check has reported `runs` times; the JSON lines and stderr (SIGHUP after the first lines, if asked). */
    async function run(file: string, extra: string[], runs: number, reload?: () => void) {
      const { child, io, exited } = startRun([file, '--allow-root', ...extra]);
      const deadline = Date.now() + 15_000;
      const count = () => (io.stdout.match(/\n/g) ?? []).length;
      while (count() < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      if (reload !== undefined) {
        reload();
        child.kill('SIGHUP');
        while (!io.stderr.includes('reloaded') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      }
      while (count() < 3 * runs && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      child.kill('SIGTERM');
      expect(await exited).toBe(143);
      return { lines: io.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: string; latencyMs: number }), stderr: io.stderr };
    }
    const file = path.join(tmp, 'tick.json');
    // First runs at 0, 500 and 1000 ms, then every 1.5 s; with a 750 ms tick from the start, b and c start 250 and 500 ms late.
    const checks = ['a', 'b', 'c'].map((id) => ({ id, command: [PROBE, 'exit', '0'], interval: '1.5s' }));
    writeFileSync(file, JSON.stringify({ tick: '750ms', checks }));
    const late = (lines: Array<{ id: string; latencyMs: number }>) => lines.filter((l) => l.id !== 'a').map((l) => l.latencyMs);
    const ticked = await run(file, [], 2, () => writeFileSync(file, JSON.stringify({ tick: '100ms', checks })));
    expect(late(ticked.lines).length).toBeGreaterThanOrEqual(4);
    // At least 250 ms late, on every run (the grid is the check's own, the tick the runner's); a on time.
    for (const ms of late(ticked.lines)) expect(ms).toBeGreaterThanOrEqual(249);
    for (const l of ticked.lines.filter((x) => x.id === 'a')) expect(l.latencyMs).toBeLessThan(200);
    expect(ticked.stderr).toContain('noshell run: reload: a new tick takes a restart; keeping 750 ms\n');
    // --tick wins over the file: none, each check when it is due.
    const exact = await run(file, ['--tick', '0'], 2);
    for (const ms of late(exact.lines)) expect(ms).toBeLessThan(200);
    // And 50 ms when neither gives one: every second, b is due at 333 ms and starts at 350, c at 667 and 700.
    writeFileSync(file, JSON.stringify({ checks: checks.map((c) => ({ ...c, interval: '1s' })) }));
    const byDefault = await run(file, [], 2);
    for (const l of byDefault.lines) {
      if (l.id !== 'a') expect(l.latencyMs).toBeGreaterThanOrEqual(l.id === 'b' ? 16 : 33);
      expect(l.latencyMs).toBeLessThan(200);
    }
  }, 60_000);

  it('ships example checks files (JSON and YAML, the same checks) that load and need no shell', async () => {
    const { loadChecksFile } = await import('../../src/config/checks-file');
    const { parseCommand } = await import('../../src/command/parse-command');
    const json = loadChecksFile(path.resolve(__dirname, '..', '..', 'examples', 'checks.json'));
    expect(json.checks.length).toBeGreaterThan(3);
    expect(loadChecksFile(path.resolve(__dirname, '..', '..', 'examples', 'checks.yaml'))).toEqual(json);
    for (const { definition: d } of json.checks) {
      if (typeof d.command === 'string') expect(parseCommand(d.command).reasons, d.id).toEqual([]);
    }
    expect(json.checks.find((c) => c.definition.id === 'zombies')?.definition.command)
      .toBe('/usr/lib/nagios/plugins/check_procs -s Z -w ~:5 -c ~:20');
  });

  it('schedule settings in defaults apply to every check', async () => {
    const { loadChecksFile } = await import('../../src/config/checks-file');
    const file = path.join(tmp, 'defaults.json');
    writeFileSync(file, JSON.stringify({
      defaults: { interval: '30s', maxAttempts: 3, timeout: '5s' },
      checks: [{ id: 'a', command: 'true' }, { id: 'b', command: 'true', interval: 1000 }],
    }));
    const cfg = loadChecksFile(file);
    // Every default goes into each definition: a reload compares whole definitions.
    expect(cfg.runner).toEqual({});
    expect(cfg.checks.map((c) => c.definition)).toEqual([
      { id: 'a', command: 'true', interval: 30_000, maxAttempts: 3, timeout: 5000 },
      { id: 'b', command: 'true', interval: 1000, maxAttempts: 3, timeout: 5000 },
    ]);
  });

  it('a bad checks file is a clear error', () => {
    const file = path.join(tmp, 'bad.json');
    writeFileSync(file, '{"checks": [{"id": "x", "command": "true", "interval": "soon"}]}');
    const r = cli('run', file);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('checks[0] (id "x"): field "interval": expected a duration');
  });

  const asRoot = process.getuid?.() === 0;
  function checksFile(name: string, text: string): string {
    const file = path.join(tmp, name);
    writeFileSync(file, text);
    return file;
  }
  const idCheck = (extra: object) => JSON.stringify({
    checks: [{ id: 'who', command: ['/bin/sh', '-c', 'echo "OK - uid=$(id -u) gid=$(id -g) groups=$(id -G)"'], interval: '1h', ...extra }],
  });

  it.runIf(asRoot)('as root it refuses checks that would run as root (exit 2, naming them); --check too', () => {
    const file = checksFile('root.json', idCheck({}));
    for (const args of [['run', file], ['run', '--check', file]]) {
      const r = cli(...args);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('refusing to run checks as root: "who" would run as uid 0');
      expect(r.stderr).toContain('--allow-root');
    }
    // A group alone still leaves uid 0.
    expect(cli('run', '--check', checksFile('root-group.json', idCheck({ group: 'nogroup' }))).status).toBe(2);
  });

  /** Runs `noshell run` until the first result line, then stops it. */
  async function firstResult(...args: string[]): Promise<{ line: Record<string, unknown>; code: number | null; stderr: string }> {
    const child = spawn(process.execPath, [CLI, 'run', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const deadline = Date.now() + 15_000;
    while (!stdout.includes('\n') && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGTERM');
    const code = await exited;
    expect(stdout, stderr).toContain('\n');
    return { line: JSON.parse(stdout.split('\n')[0]), code, stderr };
  }

  it('--allow-root runs checks as whoever we are', async () => {
    const { line, code } = await firstResult('--allow-root', checksFile('allow.json', idCheck({})));
    const groups = spawnSync('id', ['-G'], { encoding: 'utf8' }).stdout.trim();
    expect(line).toMatchObject({ id: 'who', stateName: 'OK', output: `OK - uid=${process.getuid!()} gid=${process.getgid!()} groups=${groups}` });
    expect(code).toBe(143);
  });

  it.runIf(asRoot)('a check with user nobody runs with nobody\'s uid, primary gid and groups from the user database', async () => {
    const [uid, gid, groups] = ['-u', '-g', '-G'].map((o) => spawnSync('id', [o, 'nobody'], { encoding: 'utf8' }).stdout.trim());
    const { line } = await firstResult(checksFile('nobody.json', idCheck({ user: 'nobody' })));
    expect(line).toMatchObject({ id: 'who', stateName: 'OK', output: `OK - uid=${uid} gid=${gid} groups=${groups}` });
    // As a default, and with a numeric group.
    const viaDefaults = JSON.stringify({ defaults: { user: 'nobody', group: 0 }, checks: JSON.parse(idCheck({})).checks });
    const second = await firstResult(checksFile('nobody-defaults.json', viaDefaults));
    // initgroups(nobody, 0): the group given, plus the database's memberships (none here).
    expect(second.line).toMatchObject({ output: `OK - uid=${uid} gid=0 groups=0` });
  });

  it('--check: 0 and a summary for a valid file, 2 and every problem for an invalid one', () => {
    const good = checksFile('good.json', idCheck({ user: 'nobody' }));
    const ok = cli('run', '--check', good);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toBe(`${good}: valid, 1 check\n`);
    expect(ok.stderr).toBe('');
    const bad = checksFile('bad-many.json', JSON.stringify({
      checks: [{ id: 'a', command: 'x', interval: '1s', colour: 'red' }, { id: 'b', command: 'x', interval: '1s', user: 'no-such-user-x' }],
    }));
    const r = cli('run', '--check', bad);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('checks[0] (id "a"): unknown field "colour"');
    const unknownUser = cli('run', '--check', checksFile('bad-user.json', idCheck({ user: 'no-such-user-x' })));
    expect(unknownUser.status).toBe(2);
    expect(unknownUser.stderr).toContain('checks[0] (id "who"): field "user": user "no-such-user-x": no such user');
  });

  it('--check reports every problem of a file at once: the schema\'s, duplicate ids and unknown macros together, in file order', () => {
    const bad = checksFile('bad-all.json', JSON.stringify({
      defaults: { interval: '1m' },
      checks: [
        { id: 'a', command: '$USER9$/x' },
        { id: 'a', command: '/bin/true' },
        { id: 'b', command: '/bin/true', timeout: -1, colour: 'red' },
        { id: 'c', command: '$FOO$ x' },
      ],
    }));
    const r = cli('run', '--check', bad);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n').slice(1, 6)).toEqual([
      '  checks[0] (id "a"): field "command": $USER9$ is not defined in "macros"',
      '  checks[1] (id "a"): field "id": the same id as checks[0]',
      '  checks[2] (id "b"): field "timeout": expected a duration like 500, "250ms", "10s" or "5m", got -1',
      '  checks[2] (id "b"): unknown field "colour"',
      '  checks[3] (id "c"): field "command": unknown macro $FOO$ (only $USER1$…$USER256$, $ARG1$…$ARG32$ and $$)',
    ]);
  });

  it('--check warns about an absolute program path that is not there or cannot run, once per path; still valid', () => {
    const text = checksFile('plain.txt', 'not a program\n');
    const file = checksFile('programs.json', JSON.stringify({
      defaults: { interval: '1m', ...(asRoot ? { user: 'nobody' } : {}) },
      checks: [
        { id: 'gone', command: '/usr/lib/nagios/plugins/check_not_there -w 1' },
        { id: 'gone2', command: ['/usr/lib/nagios/plugins/check_not_there'] },
        { id: 'text', command: text },
        { id: 'fine', command: '/bin/true' },
        { id: 'onpath', command: 'true' },
        { id: 'piped', command: '/bin/true | /usr/lib/nagios/plugins/check_not_there' },
      ],
    }));
    const r = cli('run', '--check', file);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${file}: valid, 6 checks\n`);
    expect(r.stderr).toBe(
      `${file}: warning: "/usr/lib/nagios/plugins/check_not_there" does not exist: 3 checks ("gone", "gone2", "piped") would end UNKNOWN\n` +
      `${file}: warning: "${text}" is not executable: 1 check ("text") would end UNKNOWN\n`);
  });

  it('runs a YAML checks file with macros', async () => {
    const file = checksFile('checks.yaml', [
      'macros:',
      '  USER1: /bin',
      'defaults:',
      '  interval: 1h',
      // Not root, a user we are not is EPERM; root needs one (or --allow-root).
      ...(asRoot ? ['  user: nobody'] : []),
      'checks:',
      '  - id: echo',
      "    command: $USER1$/echo \"OK - $ARG1$\" '$$5'",
      '    args: [from yaml]',
      '',
    ].join('\n'));
    const { line } = await firstResult(file);
    expect(line).toMatchObject({ id: 'echo', stateName: 'OK', output: 'OK - from yaml $5', viaShell: false });
  });
});

describe('noshell bench (smoke: it runs, prints every driver, writes JSON and SVG)', () => {
  // 17 tables of 11 drivers: ~40 s alone on a 2-core VM where a spawn of
  // /bin/true costs ~2 ms of CPU (past the 30 s default during a full suite).
  it('runs a quick matrix', { timeout: 120_000 }, () => {
    const out = path.join(tmp, 'bench');
    const r = cliSlow(110_000, 'bench', '--quick', '--seconds', '0.05', '--out', out);
    expect(r.status, r.stderr).toBe(0);
    for (const driver of ['C reference', 'C reference[vfork]', 'noshell.execFile', 'noshell.execFile[loop]', 'noshell.exec', 'noshell.spawn', 'cp.exec', 'cp.execFile', 'cp.spawn']) {
      expect(r.stdout).toContain(`| ${driver} |`);
    }
    const json = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8'));
    expect(json.meta).toMatchObject({ quick: true });
    for (const m of json.results) {
      expect(Object.keys(m).sort()).toEqual(['blockedMaxMs', 'blockedP50Ms', 'blockedP99Ms', 'childCpuMsPer1k', 'concurrency', 'driver', 'heapMiB',
        'loopDelayMaxMs', 'loopDelayP50Ms', 'loopDelayP99Ms', 'parentCpuMsPer1k', 'roundsPerSec', 'seconds', 'spawns', 'spawnsPerSec', 'workload'].sort());
      expect(m.roundsPerSec).toHaveLength(2);
      expect(m.spawns).toBeGreaterThan(0);
    }
    expect(readFileSync(path.join(out, 'memory.svg'), 'utf8')).toMatch(/^<svg [^>]*>[\s\S]*<\/svg>\n$/);
    // Each result once: stdout is results.md (header and tables), progress and the files written go to stderr.
    expect(r.stdout).toBe(readFileSync(path.join(out, 'results.md'), 'utf8'));
    expect(r.stdout.match(/^\| C reference \|/gm)).toHaveLength(json.results.filter((x: { driver: string }) => x.driver === 'C reference').length);
    // Each table has both C loops, each measured for real (a loop that ran the other spawn is refused).
    const refs = json.results.filter((x: { driver: string }) => x.driver === 'C reference[vfork]');
    expect(refs).toHaveLength(json.results.filter((x: { driver: string }) => x.driver === 'C reference').length);
    expect(r.stderr).toMatch(/^bench: table 1\/\d+ true \| concurrency 1 \| heap small: done in \d+ s/m);
    expect(r.stderr).toContain(`wrote ${path.join(out, 'results.json')}, ${path.join(out, 'results.md')}, ${path.join(out, 'memory.svg')}`);
    // eslint-disable-next-line no-control-regex -- not a terminal: no control sequences
    expect(r.stdout + r.stderr).not.toMatch(/\x1b/);
  });
});
