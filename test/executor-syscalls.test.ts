// What the executor thread asks of the kernel per exec, read from strace:
// a captured pipe's end is learnt from epoll (EPOLLHUP), not from a read
// that returns 0 bytes (issue 21: one or two syscalls fewer per exec).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const script = path.resolve(__dirname, 'fallback', 'pipe-ends.js');
const hasStrace = spawnSync('strace', ['-V']).status === 0;
if (!hasStrace) console.warn('skipped: the executor syscall checks need strace (apt-get install strace)');

/** One strace file per thread (-ff): no lines split by other threads' calls. */
function traceThreads(): { out: any; threads: string[] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-strace-'));
  try {
    const r = spawnSync('strace', ['-f', '-ff', '-qq', '-e', 'trace=read,clone,clone3,epoll_wait', '-o', path.join(dir, 't'),
      process.execPath, script], { encoding: 'utf8', env: { ...process.env, NOSHELL_NO_EXECUTOR: '' } });
    expect(r.status, r.stderr).toBe(0);
    return { out: JSON.parse(r.stdout), threads: readdirSync(dir).map((f) => readFileSync(path.join(dir, f), 'utf8')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!hasStrace)('executor syscalls', () => {
  it('learns that a child\'s output ended from EPOLLHUP: no read returns 0 bytes, and nothing is lost', () => {
    const { out, threads } = traceThreads();
    expect(out.empty).toEqual(Array.from({ length: 10 }, () => ['', '', 0]));
    expect(out.both).toEqual(Array.from({ length: 10 }, (_, i) => [`out${i}\n`, `err${i}\n`]));
    expect(out.big).toBe(3_000_000);
    expect(out.late).toBe('early\nlate\n');
    // The executor: the thread that spawned the children (clone with CLONE_VFORK).
    const executor = threads.filter((t) => t.includes('CLONE_VFORK'));
    expect(executor).toHaveLength(1);
    const lines = executor[0].split('\n');
    const pipeReads = lines.filter((l) => l.startsWith('read(') && l.includes(', 65536)'));
    const hangups = lines.filter((l) => l.startsWith('epoll_wait(') && l.includes('EPOLLHUP'));
    // 3 MB came through the pipe in reads of at most 64 KiB, and both
    // streams of every child ended by a hang-up.
    expect(pipeReads.length).toBeGreaterThanOrEqual(46 + 20);
    expect(hangups.length).toBeGreaterThan(0);
    expect(pipeReads.filter((l) => l.endsWith(' = 0'))).toEqual([]);
  }, 60_000);
});
