import { describe, expect, it } from 'vitest';
import { exec, execFile, ExecError, ShellSyntaxError, SpawnError } from '../src/index';
import { nulFields, PROBE } from './helpers';

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

  it('abort rejects with the reason as cause', async () => {
    const ac = new AbortController();
    const p = execFile('sleep', ['30'], { signal: ac.signal });
    ac.abort(new Error('shutting down'));
    const err = await p.catch((e) => e);
    expect(err).toMatchObject({ aborted: true, signal: 'SIGTERM' });
    expect(err.cause).toMatchObject({ message: 'shutting down' });
  });

  it('spawn failures reject with SpawnError', async () => {
    await expect(execFile('/nonexistent/x')).rejects.toBeInstanceOf(SpawnError);
  });
});

describe('exec', () => {
  it('runs an argv array or a plain command string without a shell', async () => {
    const a = await exec([PROBE, 'argv', 'a b', '$x']);
    expect(nulFields(a.stdout as string)).toEqual([PROBE, 'argv', 'a b', '$x']);
    const s = await exec(`${PROBE}   argv one\ttwo`);
    expect(nulFields(s.stdout as string)).toEqual([PROBE, 'argv', 'one', 'two']);
  });

  it('refuses strings that need a shell instead of guessing', async () => {
    const err = await exec(`${PROBE} argv 'a b' | cat`).catch((e) => e);
    expect(err).toBeInstanceOf(ShellSyntaxError);
    expect(err.reasons).toEqual(expect.arrayContaining(['pipe']));
    await expect(exec('   ')).rejects.toBeInstanceOf(ShellSyntaxError);
  });
});
