import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exec, execFile, ExecError, parseCommand, ShellSyntaxError, SpawnError } from '../../src/index';
import { childProcesses, nulFields, parseInfo, PROBE } from '../helpers';

describe('execFile', () => {
  it('buffers stdout and stderr separately, as utf8 or Buffers', async () => {
    const r = await execFile(PROBE, ['both']);
    expect(r).toMatchObject({ stdout: 'out1\nout2\n', stderr: 'err1\n', exitCode: 0, signal: null, viaShell: false });
    const b = await execFile(PROBE, ['argv', 'é'], { encoding: 'buffer' });
    expect(Buffer.isBuffer(b.stdout)).toBe(true);
    expect(b.stdout).toEqual(Buffer.from(`${PROBE}\0argv\0é\0`));
  });

  it('writes input to stdin, as string or bytes; without input stdin is /dev/null', async () => {
    expect((await execFile(PROBE, ['cat'], { input: 'line1\nline2' })).stdout).toBe('line1\nline2');
    const bytes = Buffer.from([0, 1, 2, 255, 254]);
    expect((await execFile(PROBE, ['cat'], { input: bytes, encoding: 'buffer' })).stdout).toEqual(bytes);
    // Reads EOF at once instead of waiting on a pipe nobody writes to.
    expect((await execFile(PROBE, ['cat'])).stdout).toBe('');
  });

  it('large input to a child that never reads does not hang or throw', async () => {
    const r = await execFile(PROBE, ['exit', '0'], { input: Buffer.alloc(8 * 1024 * 1024) });
    expect(r.exitCode).toBe(0);
  });

  it('collects 50 MB of output', async () => {
    const size = 50 * 1024 * 1024;
    const r = await execFile(PROBE, ['spew', String(size)], { encoding: 'buffer', maxBuffer: size });
    expect(r.stdout.length).toBe(size);
    expect((r.stdout as Buffer).every((c) => c === 0x78)).toBe(true);
  });

  it('stops at maxBuffer: keeps that much, kills the child, memory stays bounded', async () => {
    const before = process.memoryUsage().rss;
    const err = await execFile(PROBE, ['spew', String(500 * 1024 * 1024)], { maxBuffer: 1024 * 1024, encoding: 'buffer' }).catch((e) => e);
    expect(err).toBeInstanceOf(ExecError);
    expect(err.maxBufferExceeded).toBe('stdout');
    expect(err.stdout.length).toBe(1024 * 1024);
    expect(err.message).toContain('maxBuffer');
    // Killed (SIGTERM) or SIGPIPE'd after we closed the pipe: either way not 500 MB later.
    expect(['SIGTERM', 'SIGPIPE']).toContain(err.signal);
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
  });

  it('rejects with ExecError carrying the whole result; reject: false resolves', async () => {
    const err = await execFile('sh', ['-c', 'echo partial; echo oops >&2; exit 3']).catch((e) => e);
    expect(err).toBeInstanceOf(ExecError);
    expect(err).toMatchObject({ exitCode: 3, signal: null, timedOut: false, stdout: 'partial\n', stderr: 'oops\n' });
    expect(err.command).toBe("sh -c 'echo partial; echo oops >&2; exit 3'");
    expect(err.message).toBe("Command failed with exit code 3: sh -c 'echo partial; echo oops >&2; exit 3'\noops");
    const ok = await execFile('sh', ['-c', 'exit 3'], { reject: false });
    expect(ok.exitCode).toBe(3);
  });

  it('timeout rejects with timedOut and kills the child', async () => {
    const err = await execFile('sleep', ['30'], { timeout: 100 }).catch((e) => e);
    expect(err).toMatchObject({ timedOut: true, signal: 'SIGTERM' });
    expect(err.message).toMatch(/^Command timed out after 100 ms: sleep 30/);
  });

  it('after a timeout, output held open by a process that left the group does not hang exec', async () => {
    const t = performance.now();
    const err = await execFile('sh', ['-c', 'setsid sleep 5 & echo $!; sleep 30'], { timeout: 200, forceKillAfter: 200 }).catch((e) => e);
    expect(err).toMatchObject({ timedOut: true });
    expect(performance.now() - t).toBeLessThan(3000);
    // The escaped sleep is not ours to keep: the test ends it.
    const escaped = Number(String(err.stdout).trim());
    expect(escaped).toBeGreaterThan(0);
    process.kill(escaped, 'SIGKILL');
  });

  it('abort of a running child terminates it and rejects with the reason as cause', async () => {
    const ac = new AbortController();
    const p = execFile('sleep', ['30'], { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 200)); // spawned by now
    ac.abort(new Error('shutting down'));
    const err = await p.catch((e) => e);
    expect(err).toMatchObject({ aborted: true, signal: 'SIGTERM' });
    expect(err.result.pid).toBeGreaterThan(0);
    expect(err.cause).toMatchObject({ message: 'shutting down' });
  });

  it('abort right after the call: still queued, the command never runs (pid 0); already spawned, it is terminated', async () => {
    for (let i = 0; i < 20; i++) {
      const ac = new AbortController();
      const p = execFile('sleep', ['30'], { signal: ac.signal });
      ac.abort(new Error('shutting down'));
      const err = await p.catch((e) => e);
      expect(err).toBeInstanceOf(ExecError);
      expect(err.aborted).toBe(true);
      expect(err.cause).toMatchObject({ message: 'shutting down' });
      if (err.result.pid === 0) {
        expect([err.exitCode, err.signal, err.message]).toEqual([null, null, 'Command was aborted: sleep 30']);
      } else {
        expect(err.signal).toBe('SIGTERM');
      }
    }
    expect(childProcesses()).toEqual([]);
  });

  it('spawn failures reject with SpawnError', async () => {
    await expect(execFile('/nonexistent/x')).rejects.toBeInstanceOf(SpawnError);
  });
});

describe('exec', () => {
  it('runs an argv array, or a string split by the shell word rules without a shell', async () => {
    const a = await exec([PROBE, 'argv', 'a b', '$x']);
    expect(nulFields(a.stdout as string)).toEqual([PROBE, 'argv', 'a b', '$x']);
    const s = await exec(`${PROBE}   argv one\ttwo 'a b' "c\\"d" ''`);
    expect(nulFields(s.stdout as string)).toEqual([PROBE, 'argv', 'one', 'two', 'a b', 'c"d', '']);
    expect(s).toMatchObject({ viaShell: false, command: `${PROBE}   argv one\ttwo 'a b' "c\\"d" ''` });
    // No shell in between: the Node process is the parent.
    const info = parseInfo((await exec(`${PROBE} info`)).stdout as string);
    expect(Number(info.ppid)).toBe(process.pid);
  });

  it('puts leading NAME=value words in the child environment', async () => {
    const r = await exec(`GREETING='hello there' ${PROBE} env GREETING`, { env: { GREETING: 'overridden' } });
    expect(nulFields(r.stdout as string)).toEqual(['GREETING=hello there']);
  });

  it('refuses strings that need a shell instead of guessing', async () => {
    const err = await exec(`${PROBE} argv 'a b' | cat &`).catch((e) => e);
    expect(err).toBeInstanceOf(ShellSyntaxError);
    expect(err.reasons).toEqual(['background']);
    expect(err.message).toContain('background');
    // Nothing to run is bad input, with or without a shell.
    await expect(exec('   ')).rejects.toThrow(TypeError);
    await expect(exec('A=1', { shell: 'auto' })).rejects.toThrow(/runs no program/);
    await expect(exec('cat $HOME')).rejects.toMatchObject({ reasons: ['variable'] });
    // dash runs its own echo, not /bin/echo: that needs the shell too.
    await expect(exec('echo "a\\nb"')).rejects.toMatchObject({ reasons: ['builtin'] });
  });

  it("shell: 'auto' uses /bin/sh only when needed; true always", async () => {
    const direct = await exec(`${PROBE} info`, { shell: 'auto' });
    expect(direct.viaShell).toBe(false);
    expect(Number(parseInfo(direct.stdout as string).ppid)).toBe(process.pid);

    // A pipeline needs no shell: the probe's parent is still us.
    const pipeline = await exec(`${PROBE} info | cat`, { shell: 'auto' });
    expect(pipeline.viaShell).toBe(false);
    expect(Number(parseInfo(pipeline.stdout as string).ppid)).toBe(process.pid);

    const piped = await exec(`${PROBE} info | cat $NOSHELL_UNSET`, { shell: 'auto' });
    expect(piped.viaShell).toBe(true);
    // The probe's parent is the shell now, not us.
    expect(Number(parseInfo(piped.stdout as string).ppid)).not.toBe(process.pid);

    const forced = await exec('echo "$0"', { shell: true });
    expect(forced).toMatchObject({ viaShell: true, stdout: '/bin/sh\n' });

    // A string starting with '-' is a command for the shell, not an option.
    const dash = await exec('-definitely-not-a-command', { shell: true, reject: false });
    expect(dash).toMatchObject({ exitCode: 127, viaShell: true });
    expect(dash.stderr).toContain('-definitely-not-a-command: not found');

    const arr = await exec(['/bin/echo', '$HOME | x'], { shell: true });
    expect(arr).toMatchObject({ viaShell: false, stdout: '$HOME | x\n' });
  });

  it('every option set to undefined is absent: each takes its default (issue 17)', async () => {
    const none = {
      cwd: undefined, env: undefined, extendEnv: undefined, argv0: undefined, stdin: undefined, stdout: undefined,
      stderr: undefined, timeout: undefined, killSignal: undefined, forceKillAfter: undefined, signal: undefined,
      processGroup: undefined, uid: undefined, gid: undefined, groups: undefined, method: undefined, input: undefined,
      maxBuffer: undefined, encoding: undefined, reject: undefined, shell: undefined, ref: undefined,
    };
    const r = await exec(`${PROBE} info`, none);
    expect(r).toMatchObject({ exitCode: 0, viaShell: false });
    const info = parseInfo(r.stdout as string);
    // Own process group, the parent's working directory.
    expect(info.pgid).toBe(info.pid);
    expect(info.cwd).toBe(process.cwd());
    // shell defaults to false, reject to true.
    await expect(exec('echo a | cat', none)).rejects.toThrow(ShellSyntaxError);
    await expect(exec([PROBE, 'exit', '3'], none)).rejects.toThrow(ExecError);
  });

  it('bad shell values and execFile with shell: true are TypeErrors', async () => {
    await expect(exec('true', { shell: 'yes' as never })).rejects.toThrow(TypeError);
    await expect(execFile('/bin/true', [], { shell: true })).rejects.toThrow(TypeError);
    expect((await execFile('/bin/echo', ['$x'], { shell: 'auto' })).stdout).toBe('$x\n');
  });
});

describe('__proto__, constructor and toString are ordinary variable names (they were lost on a plain object)', () => {
  const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];
  // JSON.parse makes own properties of all of them, as a config file would.
  const env = (): Record<string, string> => JSON.parse('{"__proto__":"x","constructor":"c","toString":"t","hasOwnProperty":"h"}');
  const lines = (stdout: string | Buffer) => String(stdout).split('\n').filter((l) => names.some((n) => l.startsWith(`${n}=`)));

  it('__proto__ given in the env option reaches the child (/usr/bin/env), with and without extendEnv', async () => {
    for (const extendEnv of [true, false]) {
      const r = await execFile('/usr/bin/env', [], { env: env(), extendEnv });
      expect(lines(r.stdout).sort(), `extendEnv ${extendEnv}`).toEqual(['__proto__=x', 'constructor=c', 'hasOwnProperty=h', 'toString=t']);
    }
    // Only what was given when extendEnv is false: nothing from the prototype.
    const only = await execFile('/usr/bin/env', [], { env: { A: '1' }, extendEnv: false });
    expect(only.stdout).toBe('A=1\n');
  });

  it('__proto__=x in a command string reaches the child (/usr/bin/env), also merged with an env option', async () => {
    const r = await exec('__proto__=x constructor=c toString=t /usr/bin/env');
    expect(lines(r.stdout).sort()).toEqual(['__proto__=x', 'constructor=c', 'toString=t']);
    const merged = await exec('__proto__=x /usr/bin/env', { env: { A: 'a' }, extendEnv: false });
    expect(merged.stdout).toBe('A=a\n__proto__=x\n');
  });

  it('parseCommand gives __proto__=x as an own variable and inherits no names', () => {
    const { env } = parseCommand('__proto__=x toString=t /usr/bin/env');
    expect(Object.entries(env)).toEqual([['__proto__', 'x'], ['toString', 't']]);
    expect(env.constructor).toBeUndefined();
    expect('hasOwnProperty' in parseCommand('/usr/bin/env').env).toBe(false);
  });

  it('__proto__ inherited from process.env survives a merge, and undefined removes it', async () => {
    process.env.__proto__ = 'inherited';
    try {
      const r = await execFile('/usr/bin/printenv', ['__proto__'], { env: { A: '1' } });
      expect(r.stdout).toBe('inherited\n');
      const removed = await execFile('/usr/bin/printenv', ['__proto__'], { env: { ['__proto__']: undefined }, reject: false });
      expect(removed.exitCode).toBe(1);
    } finally {
      delete process.env.__proto__;
    }
  });
});

// A background grandchild keeps the child's stdout open long after the child
// exited. The result is the child's own status and what was read in
// outputGrace after its exit; the pipes are then let go (outputCut), and the
// grandchild is left to run, as Nagios 4 leaves it. Both paths: the executor,
// and the event loop (NOSHELL_NO_EXECUTOR=1, run in a child Node), each also
// without pidfds (the exit is then polled).
describe('outputGrace: a grandchild does not hold the result hostage', () => {
  const dist = path.resolve(__dirname, '..', '..', 'dist', 'index.js');
  const script = `
    const { exec, runCheck } = require(${JSON.stringify(dist)});
    (async () => {
      const out = [];
      for (const [argv, opts] of [
        [['sh', '-c', 'sleep 30 & echo $! >&2; echo hi'], {}],
        [['sh', '-c', 'sleep 30 & echo $! >&2; echo hi'], { outputGrace: 0 }],
        [['sh', '-c', '(sleep 0.2; echo late) & echo early'], { outputGrace: '2s' }],
        [['sh', '-c', 'sleep 30 & echo $! >&2; echo hi'], { timeout: 1000 }],
      ]) {
        const t = performance.now();
        const r = await exec(argv, opts);
        out.push({ ms: performance.now() - t, stdout: r.stdout, exitCode: r.exitCode, cut: r.outputCut, timedOut: r.timedOut, left: r.stderr.trim() });
      }
      const t = performance.now();
      const c = await runCheck(['sh', '-c', 'sleep 30 & echo $! >&2; echo "WARNING - it left a daemon"; exit 1']);
      out.push({ ms: performance.now() - t, state: c.state, output: c.output, cut: c.outputCut, left: c.stderr.trim() });
      console.log(JSON.stringify(out));
    })();`;

  it.each([
    ['executor', {}], ['event loop', { NOSHELL_NO_EXECUTOR: '1' }],
    ['executor, no pidfd', { NOSHELL_NO_PIDFD: '1' }], ['event loop, no pidfd', { NOSHELL_NO_EXECUTOR: '1', NOSHELL_NO_PIDFD: '1' }],
  ])('%s', (_name, env) => {
    const r = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
    const results = JSON.parse(r.stdout) as Array<Record<string, unknown> & { ms: number; left: string }>;
    try {
      const [plain, zero, late, timed, check] = results;
      // exec(['sh','-c','sleep 30 & echo hi']): within the 100 ms default grace + 100 ms.
      expect(plain).toMatchObject({ stdout: 'hi\n', exitCode: 0, cut: true });
      expect(plain.ms).toBeLessThan(200);
      expect(zero).toMatchObject({ stdout: 'hi\n', exitCode: 0, cut: true });
      expect(zero.ms).toBeLessThan(100);
      // Output a grandchild writes within the grace is kept, and its end ends the wait.
      expect(late).toMatchObject({ stdout: 'early\nlate\n', exitCode: 0, cut: false });
      expect(late.ms).toBeLessThan(1500);
      // The child's own exit is the result, not a timeout.
      expect(timed).toMatchObject({ stdout: 'hi\n', exitCode: 0, cut: true, timedOut: false });
      expect(timed.ms).toBeLessThan(500);
      expect(check).toMatchObject({ state: 1, output: 'WARNING - it left a daemon', cut: true });
      expect(check.ms).toBeLessThan(500);
      // The grandchildren were left running (Nagios 4 leaves them too).
      for (const x of [plain, zero, timed, check]) expect(existsSync(`/proc/${x.left}`)).toBe(true);
    } finally {
      for (const x of results) if (/^\d+$/.test(x.left)) try { process.kill(Number(x.left), 'SIGKILL'); } catch { /* gone */ }
    }
  });

  // A timeout that comes due in the grace: the child ended on its own.
  const timing = `
    const { exec, runCheck } = require(${JSON.stringify(dist)});
    (async () => {
      const c = await runCheck(['sh', '-c', 'sleep 30 & echo $! >&2; sleep 0.25; echo "OK - late"'], { timeout: 300 });
      let t = performance.now();
      const e = await exec(['sh', '-c', 'sleep 30 & echo $! >&2; echo hi'], { timeout: 200, outputGrace: 1000 });
      const ms = performance.now() - t;
      // outputGrace 0 and nothing left holding the pipes: never cut, nothing lost.
      let cut = 0, lost = 0;
      for (let round = 0; round < 10; round++) {
        const rs = await Promise.all(Array.from({ length: 40 }, (_, i) => exec(['sh', '-c', 'sleep 0.00' + (i % 10) + '; echo hi'], { outputGrace: 0 })));
        for (const r of rs) { if (r.outputCut) cut++; if (r.stdout !== 'hi\\n') lost++; }
      }
      console.log(JSON.stringify({ check: [c.state, c.output, c.timedOut, c.outputCut, c.stderr.trim()], exec: [e.exitCode, e.timedOut, e.outputCut, ms, e.stderr.trim()], cut, lost }));
    })();`;

  it.each([['executor', {}], ['event loop', { NOSHELL_NO_EXECUTOR: '1' }]])(
    'a timeout due during the grace is not a timeout; grace 0 with nothing left never cuts (%s)',
    (_name, env) => {
      const r = spawnSync(process.execPath, ['-e', timing], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
      const out = JSON.parse(r.stdout) as { check: unknown[]; exec: unknown[]; cut: number; lost: number };
      try {
        expect(out.check.slice(0, 4)).toEqual([0, 'OK - late', false, true]);
        expect(out.exec.slice(0, 3)).toEqual([0, false, true]);
        expect(out.exec[3]).toBeLessThan(600);
        expect([out.cut, out.lost]).toEqual([0, 0]);
      } finally {
        for (const pid of [out.check[4], out.exec[4]]) try { process.kill(Number(pid), 'SIGKILL'); } catch { /* gone */ }
      }
    },
  );

  it('Infinity waits for the output\'s end, however long; bad values are refused', async () => {
    const t = performance.now();
    const r = await exec(['sh', '-c', 'sleep 0.4 & echo x'], { outputGrace: Infinity });
    expect(r).toMatchObject({ stdout: 'x\n', outputCut: false });
    expect(performance.now() - t).toBeGreaterThan(380);
    for (const bad of [-1, 'soon', 2 ** 31, NaN]) {
      await expect(exec(['/bin/true'], { outputGrace: bad as number })).rejects.toThrow(/outputGrace/);
    }
  });

  it('a child that exits with its output ended pays nothing: no cut, no wait', async () => {
    const r = await exec(['sh', '-c', 'echo a; sleep 0.05; echo b']);
    expect(r).toMatchObject({ stdout: 'a\nb\n', outputCut: false });
  });
});

// all: stdout and stderr interleaved in the order they came, beside the two
// kept apart; on both paths, as strings and as Buffers, capped like them.
describe('all', () => {
  const dist = path.resolve(__dirname, '..', '..', 'dist', 'index.js');
  const script = `
    const { exec, execFile } = require(${JSON.stringify(dist)});
    (async () => {
      const sh = 'echo a; sleep 0.03; echo bb >&2; sleep 0.03; echo c; sleep 0.03; printf "%s" dd >&2';
      const r = await exec(['sh', '-c', sh], { all: true });
      const b = await exec(['sh', '-c', sh], { all: true, encoding: 'buffer' });
      const none = await exec(['sh', '-c', sh]);
      const err = await exec(['sh', '-c', sh + '; exit 3'], { all: true }).catch((e) => e);
      const big = await execFile('/bin/sh', ['-c', 'head -c 300000 /dev/zero | tr "\\\\0" o; head -c 300000 /dev/zero | tr "\\\\0" e >&2'], { all: true });
      const cap = await execFile('/bin/sh', ['-c', 'head -c 5000 /dev/zero; head -c 5000 /dev/zero >&2'], { all: true, maxBuffer: 1000, reject: false });
      console.log(JSON.stringify({
        r: [r.all, r.stdout, r.stderr], b: Buffer.isBuffer(b.all) && b.all.toString(), none: 'all' in none,
        err: [err.name, err.all], big: [big.all.length, big.all.split('o').join('').length, big.all.split('e').join('').length],
        cap: [cap.all.length, cap.maxBufferExceeded],
      }));
    })();`;
  it.each([['executor', {}], ['event loop', { NOSHELL_NO_EXECUTOR: '1' }]])('%s', (_name, env) => {
    const r = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
    const out = JSON.parse(r.stdout);
    expect(out.r).toEqual(['a\nbb\nc\ndd', 'a\nc\n', 'bb\ndd']);
    expect(out.b).toBe('a\nbb\nc\ndd');
    expect(out.none).toBe(false);
    expect(out.err).toEqual(['ExecError', 'a\nbb\nc\ndd']);
    expect(out.big).toEqual([600_000, 300_000, 300_000]);
    // Each stream is cut at maxBuffer; all holds what was kept of both, no more.
    expect(out.cap[0]).toBeLessThanOrEqual(2000);
    expect(out.cap[1]).not.toBe(null);
  });

  it('all must be a boolean', async () => {
    await expect(exec(['/bin/true'], { all: 'yes' as never })).rejects.toThrow(/all must be a boolean/);
  });
});
