import { describe, expect, it } from 'vitest';
import { popen, ShellSyntaxError, SpawnError } from '../../src/index';
import { childProcesses, nulFields, parseInfo, PROBE } from '../helpers';

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += chunk.toString();
  return out;
}

describe("popen 'r'", () => {
  it('reads the child stdout; close() returns its status', async () => {
    const p = popen(`${PROBE} argv 'a b' c`, 'r');
    expect(p.pid).toBeGreaterThan(0);
    expect(p.viaShell).toBe(false);
    expect(nulFields(await readAll(p))).toEqual([PROBE, 'argv', 'a b', 'c']);
    const st = await p.close();
    expect(st).toMatchObject({ exitCode: 0, signal: null });
    expect(await p.close()).toBe(st);
  });

  it('lines() iterates lines; stdin is /dev/null', async () => {
    const p = popen(['sh', '-c', 'printf "one\\ntwo\\r\\nthree"; cat; echo after-eof'], 'r');
    const lines: string[] = [];
    for await (const line of p.lines()) lines.push(line);
    expect(lines).toEqual(['one', 'two', 'threeafter-eof']);
    expect((await p.close()).exitCode).toBe(0);
  });

  it('output is kept for a late reader', async () => {
    const p = popen(['/bin/echo', 'still here'], 'r');
    await p.subprocess.exited;
    await new Promise((r) => setTimeout(r, 50));
    expect(await readAll(p)).toBe('still here\n');
    await p.close();
  });

  it('closing early does not hang on a child blocked writing: SIGPIPE reaches it', async () => {
    const p = popen([PROBE, 'spew', String(1 << 30)], 'r');
    const first = await new Promise<Buffer>((resolve) => p.once('data', resolve));
    expect(first.length).toBeGreaterThan(0);
    const st = await p.close();
    expect(st.signal).toBe('SIGPIPE');
  });

  it('backpressure: a paused reader stops the writer instead of buffering', async () => {
    const p = popen([PROBE, 'spew', String(256 << 20)], 'r');
    p.pause();
    await new Promise((r) => setTimeout(r, 300));
    // The child blocks on the full pipe; we hold at most the stream's highWaterMark.
    expect(p.readableLength).toBeLessThan(1 << 20);
    expect(p.subprocess.exitStatus).toBeNull();
    expect((await p.close()).signal).toBe('SIGPIPE');
  });

  it("stderr option: 'stdout' merges it", async () => {
    const p = popen([PROBE, 'both'], 'r', { stderr: 'stdout' });
    expect(await readAll(p)).toBe('out1\nerr1\nout2\n');
    await p.close();
  });
});

describe("popen 'w'", () => {
  it('writes to the child stdin; close() ends it and waits', async () => {
    const w = popen(['sh', '-c', `cat > /dev/null; exit 4`], 'w');
    expect(w.write('hello\n')).toBe(true);
    const st = await w.close();
    expect(st.exitCode).toBe(4);
  });

  it('backpressure: write() returns false on a full pipe, drain follows', async () => {
    const w = popen(['sh', '-c', 'sleep 0.2; cat > /dev/null'], 'w');
    const chunk = Buffer.alloc(1 << 20);
    let full = false;
    for (let i = 0; i < 64 && !full; i++) full = !w.write(chunk);
    expect(full).toBe(true);
    await new Promise((r) => w.once('drain', r));
    expect((await w.close()).exitCode).toBe(0);
  });

  it('EPIPE from a child that closed its stdin is not an unhandled error', async () => {
    const w = popen(['sh', '-c', 'exec 0<&-; sleep 0.2'], 'w');
    await new Promise((r) => setTimeout(r, 50));
    w.write(Buffer.alloc(1 << 20));
    expect((await w.close()).exitCode).toBe(0);
  });

  it('close() on a child that stopped reading does not throw', async () => {
    const w = popen(['/bin/true'], 'w');
    await w.subprocess.exited;
    w.write(Buffer.alloc(1 << 20));
    expect((await w.close()).exitCode).toBe(0);
  });
});

describe('many popen streams at once', () => {
  it('never hold each other open (no pipe end leaks into a sibling)', async () => {
    // Each cat only sees EOF if no other child holds its stdin's write end.
    const writers = Array.from({ length: 8 }, () => popen([PROBE, 'cat'], 'w', { stdout: 'ignore' }));
    const readers = Array.from({ length: 8 }, () => popen([PROBE, 'info'], 'r'));
    for (const r of readers) {
      const info = parseInfo(await readAll(r));
      expect(info.fds).toBe('0,1,2');
    }
    await Promise.all(writers.map(async (w, i) => {
      w.write(`writer ${i}\n`);
      expect((await w.close()).exitCode).toBe(0);
    }));
    await Promise.all(readers.map((r) => r.close()));
    expect(childProcesses()).toEqual([]);
  });
});

describe('popen errors', () => {
  it('bad input is a TypeError before anything runs', () => {
    expect(() => popen('/bin/true', 'x' as never)).toThrow(TypeError);
    expect(() => popen(5 as never, 'r')).toThrow(TypeError);
    expect(() => popen(['true', 'a\0b'], 'r')).toThrow(TypeError);
    expect(() => popen('/bin/true', 'r', { stdout: 'ignore' } as never)).toThrow(TypeError);
    expect(() => popen('/bin/true', 'r', { stdin: 'pipe' } as never)).toThrow(TypeError);
    expect(() => popen('/bin/true', 'r', { nope: 1 } as never)).toThrow(TypeError);
    expect(childProcesses()).toEqual([]);
  });

  it('spawn errors throw SpawnError; shell syntax throws ShellSyntaxError', () => {
    expect(() => popen('/nonexistent/x', 'r')).toThrow(SpawnError);
    expect(() => popen('ls * | wc', 'r')).toThrow(ShellSyntaxError);
  });

  it("shell: 'auto' runs through /bin/sh when needed", async () => {
    const p = popen('echo a; echo b', 'r', { shell: 'auto' });
    expect(p.viaShell).toBe(true);
    expect(await readAll(p)).toBe('a\nb\n');
    await p.close();
  });
});
