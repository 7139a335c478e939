// The executor threads' scheduling policy, read from strace: each sleeps
// as SCHED_BATCH (woken by a submit it does not preempt the submitting
// thread) and starts children as SCHED_OTHER (as a batch task its wake-up
// at the child's execve waited behind whatever ran: with two CPU hogs on
// the machine, one exec at a time fell from ~670 to 130-230/s when starts
// ran as batch, issue 21).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const script = path.resolve(__dirname, '..', 'fallback', 'pipe-ends.js');
const hasStrace = spawnSync('strace', ['-V']).status === 0;
if (!hasStrace) console.warn('skipped: the executor syscall checks need strace (apt-get install strace)');
// The policy switches happen only under a SCHED_OTHER creator (a real-time
// or idle one keeps its policy, by design).
const underOther = /^policy\s*:\s*0$/m.test(readFileSync('/proc/self/sched', 'utf8'));
if (!underOther) console.warn('skipped: the executor policy checks need a SCHED_OTHER test process (run without chrt)');

/** One strace file per thread (-ff: no line split by another thread's call). */
function traceThreads(mode: string): { out: any; executors: string[][] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-strace-'));
  try {
    const r = spawnSync('strace', ['-f', '-ff', '-qq', '-e', 'trace=clone,clone3,epoll_wait,sched_setscheduler',
      '-o', path.join(dir, 't'), process.execPath, script, mode], { encoding: 'utf8', env: { ...process.env, NOSHELL_NO_EXECUTOR: '' } });
    expect(r.status, r.stderr).toBe(0);
    const threads = readdirSync(dir).map((f) => readFileSync(path.join(dir, f), 'utf8'));
    // The executors: the threads that spawned the children (clone with CLONE_VFORK).
    const executors = threads.filter((t) => t.includes('CLONE_VFORK')).map((t) => t.split('\n').filter(Boolean));
    expect(executors.length).toBeGreaterThanOrEqual(1);
    return { out: JSON.parse(r.stdout), executors };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The last argument of a call (strace pads before ' = '). */
function lastArg(line: string): string {
  const close = line.lastIndexOf(')', line.lastIndexOf(' = '));
  return line.slice(line.lastIndexOf(', ', close) + 2, close);
}

/**
 * The policy each executor thread ran at every child start, and at every
 * sleep (an epoll_wait with a timeout other than 0).
 */
function policies(executors: string[][]): { starts: string[]; sleeps: string[] } {
  const starts: string[] = [];
  const sleeps: string[] = [];
  for (const lines of executors) {
    let policy = 'SCHED_OTHER'; // as the thread was made
    for (const call of lines) {
      if (call.startsWith('sched_setscheduler(')) {
        policy = call.includes('SCHED_BATCH') ? 'SCHED_BATCH' : 'SCHED_OTHER';
      } else if (call.startsWith('clone(') && call.includes('CLONE_VFORK')) {
        starts.push(policy);
      } else if (call.startsWith('epoll_wait(') && lastArg(call) !== '0') {
        sleeps.push(policy);
      }
    }
  }
  return { starts, sleeps };
}

describe.skipIf(!hasStrace || !underOther)('executor syscalls', () => {
  for (const mode of ['sequential', 'concurrent', 'pairs']) {
    it(`${mode}: every child starts while its executor thread runs SCHED_OTHER, every sleep is SCHED_BATCH, nothing is lost`, () => {
      const { out, executors } = traceThreads(mode);
      if (mode === 'sequential') {
        expect(out.empty).toEqual(Array.from({ length: 10 }, () => ['', '', 0]));
        expect(out.both).toEqual(Array.from({ length: 10 }, (_, i) => [`out${i}\n`, `err${i}\n`]));
        expect(out.big).toBe(3_000_000);
        expect(out.late).toBe('early\nlate\n');
      } else if (mode === 'concurrent') {
        expect(out).toEqual(Array.from({ length: 32 }, (_, i) => `c${i}\n`));
      } else {
        expect(out).toEqual(['a', 'b'].map((k) => Array.from({ length: 12 }, (_, i) => `${k}${i}\n`)));
      }
      const { starts, sleeps } = policies(executors);
      expect(starts.length).toBeGreaterThanOrEqual(mode === 'sequential' ? 22 : 24);
      expect(starts.filter((p) => p !== 'SCHED_OTHER')).toEqual([]);
      expect(sleeps.length).toBeGreaterThan(0);
      expect(sleeps.filter((p) => p !== 'SCHED_BATCH')).toEqual([]);
    }, 60_000);
  }
});
