// What the executor thread asks of the kernel per exec, read from strace
// (issue 21: fewer syscalls per exec): a captured pipe's end is learnt from
// epoll (EPOLLHUP), not from a read that returns 0 bytes; and the thread
// switches its scheduling policy only to start children beside others.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const script = path.resolve(__dirname, 'fallback', 'pipe-ends.js');
const hasStrace = spawnSync('strace', ['-V']).status === 0;
if (!hasStrace) console.warn('skipped: the executor syscall checks need strace (apt-get install strace)');

/** One strace file per thread (-ff): no lines split by other threads' calls. */
function traceThreads(mode = 'sequential'): { out: any; threads: string[] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-strace-'));
  try {
    const r = spawnSync('strace', ['-f', '-ff', '-qq', '-e', 'trace=read,clone,clone3,epoll_wait,sched_setscheduler,wait4', '-o', path.join(dir, 't'),
      process.execPath, script, mode], { encoding: 'utf8', env: { ...process.env, NOSHELL_NO_EXECUTOR: '' } });
    expect(r.status, r.stderr).toBe(0);
    return { out: JSON.parse(r.stdout), threads: readdirSync(dir).map((f) => readFileSync(path.join(dir, f), 'utf8')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!hasStrace)('executor syscalls', () => {
  it('one at a time: a stream\'s end comes from EPOLLHUP (no read returns 0 bytes), no policy switch per wake-up, nothing lost', () => {
    const { out, threads } = traceThreads();
    expect(out.empty).toEqual(Array.from({ length: 10 }, () => ['', '', 0]));
    expect(out.both).toEqual(Array.from({ length: 10 }, (_, i) => [`out${i}\n`, `err${i}\n`]));
    expect(out.big).toBe(3_000_000);
    expect(out.late).toBe('early\nlate\n');
    // The executor: the thread that spawned the children (clone with
    // CLONE_VFORK); one at a time, always the first of them.
    const executors = threads.filter((t) => t.includes('CLONE_VFORK'));
    expect(executors.length).toBeGreaterThanOrEqual(1);
    const lines = executors.join('\n').split('\n');
    const pipeReads = lines.filter((l) => l.startsWith('read(') && l.includes(', 65536)'));
    const hangups = lines.filter((l) => l.startsWith('epoll_wait(') && l.includes('EPOLLHUP'));
    // 3 MB came through the pipe in reads of at most 64 KiB, and both
    // streams of every child ended by a hang-up.
    expect(pipeReads.length).toBeGreaterThanOrEqual(46 + 20);
    expect(hangups.length).toBeGreaterThan(0);
    expect(pipeReads.filter((l) => l.endsWith(' = 0'))).toEqual([]);
    // One job at a time: asleep SCHED_BATCH from the first sleep on, and no
    // switch back and forth per wake-up (4 per exec before).
    for (const t of executors) {
      expect(t.split('\n').filter((l) => l.startsWith('sched_setscheduler('))).toEqual(['sched_setscheduler(0, SCHED_BATCH, [0]) = 0']);
    }
  }, 60_000);

  it('starts a child beside others of its thread as SCHED_OTHER, and sleeps as SCHED_BATCH', () => {
    const { out, threads } = traceThreads('concurrent');
    expect(out).toEqual(Array.from({ length: 32 }, (_, i) => `c${i}\n`));
    // One executor thread per CPU (up to two) shares the starts.
    const executors = threads.filter((t) => t.includes('CLONE_VFORK'));
    expect(executors.length).toBeGreaterThanOrEqual(1);
    let beside = 0;
    let sleeps = 0;
    for (const t of executors) {
      // A thread starts as SCHED_OTHER, as it was made; each switch says what it runs after.
      let policy = 'SCHED_OTHER';
      let inFlight = 0;
      for (const line of t.split('\n')) {
        if (line.startsWith('sched_setscheduler(')) {
          policy = line.includes('SCHED_BATCH') ? 'SCHED_BATCH' : 'SCHED_OTHER';
        } else if (line.startsWith('clone(') && line.includes('CLONE_VFORK')) {
          if (inFlight > 0) {
            beside++;
            expect(policy, line).toBe('SCHED_OTHER');
          }
          inFlight++;
        } else if (line.startsWith('wait4(') && !line.endsWith(' = 0') && !line.includes(' = -1')) {
          inFlight--;
        } else if (line.startsWith('epoll_wait(')) {
          // Its last argument, the timeout: anything but 0 may sleep.
          const close = line.lastIndexOf(')', line.lastIndexOf(' = ')); // strace pads before ' = '
          const timeout = line.slice(line.lastIndexOf(', ', close) + 2, close);
          if (timeout !== '0') {
            sleeps++;
            expect(policy, line).toBe('SCHED_BATCH');
          }
        }
      }
    }
    // The 32 children overlapped: most started while others of their thread ran.
    expect(beside).toBeGreaterThan(8);
    expect(sleeps).toBeGreaterThan(0);
  }, 60_000);
});
