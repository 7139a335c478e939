// Subprocess.lines(): a real child's stdout, stderr or both as lines, line
// ends dropped, a last line without one kept, long and multi-byte lines
// whole, and a loop broken off early closing the pipes as `head` would.
import { describe, expect, it } from 'vitest';
import { spawn } from '../../src/index';

async function collect(it: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of it) out.push(line);
  return out;
}

const sh = (script: string, options = {}) => spawn('/bin/sh', ['-c', script], { stdout: 'pipe', stderr: 'pipe', ...options });

describe('Subprocess.lines()', () => {
  it('stdout by default: \\n and \\r\\n ends dropped, an empty line kept, a last line without an end kept', async () => {
    const child = sh("printf 'one\\ntwo\\r\\n\\nlast'");
    expect(await collect(child.lines())).toEqual(['one', 'two', '', 'last']);
    expect((await child.exited).exitCode).toBe(0);
  });

  it("'stderr' reads stderr alone", async () => {
    const child = sh('echo out; echo err1 >&2; echo err2 >&2');
    expect(await collect(child.lines('stderr'))).toEqual(['err1', 'err2']);
    await child.exited;
  });

  it("'both' gives every line of both streams, each stream's in its order", async () => {
    const script = 'i=0; while [ $i -lt 200 ]; do echo "o$i"; echo "e$i" >&2; i=$((i+1)); done';
    const child = sh(script);
    const lines = await collect(child.lines('both'));
    expect(lines).toHaveLength(400);
    expect(lines.filter((l) => l.startsWith('o'))).toEqual(Array.from({ length: 200 }, (_, i) => `o${i}`));
    expect(lines.filter((l) => l.startsWith('e'))).toEqual(Array.from({ length: 200 }, (_, i) => `e${i}`));
    expect((await child.exited).exitCode).toBe(0);
  });

  it('a 1 MiB line and multi-byte characters split across reads come whole', async () => {
    const child = sh("head -c 1048576 /dev/zero | tr '\\0' x; echo; i=0; while [ $i -lt 5000 ]; do printf 'é€😀'; i=$((i+1)); done; echo");
    const lines = await collect(child.lines());
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('x'.repeat(1048576));
    expect(lines[1]).toBe('é€😀'.repeat(5000));
    await child.exited;
  });

  // As `yes | head -3` in a shell: the reader that breaks off closes the pipe,
  // and a writer that never stops gets SIGPIPE instead of blocking forever on
  // a full pipe. For 'both', stderr stays quiet: its pending read must not hold
  // the break up.
  it.each(['stdout', 'both'] as const)("breaking off %s closes the pipes: an endless writer ends by SIGPIPE and is reaped", async (of) => {
    const child = spawn('/usr/bin/yes', ['line'], { stdout: 'pipe', stderr: 'pipe' });
    let n = 0;
    for await (const line of child.lines(of)) {
      expect(line).toBe('line');
      if (++n === 3) break;
    }
    expect(n).toBe(3);
    expect(child.stdout!.destroyed).toBe(true);
    const status = await child.exited;
    expect(status.signal).toBe('SIGPIPE');
  }, 10_000);

  it('a stream that is not a pipe is a TypeError naming it; so is an unknown choice', () => {
    const child = spawn('/bin/true', [], { stdout: 'ignore', stderr: 'pipe' });
    expect(() => child.lines()).toThrow(/lines\('stdout'\): stdout is not a pipe \(spawn with stdout: 'pipe'\)/);
    expect(() => child.lines('both')).toThrow(/stdout is not a pipe/);
    expect(() => child.lines('all' as 'both')).toThrow(/must be 'stdout', 'stderr' or 'both', got "all"/);
    child.stderr?.resume();
    return child.exited;
  });
});
