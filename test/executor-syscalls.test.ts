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

const script = path.resolve(__dirname, 'fallback', 'pipe-ends.js');
const hasStrace = spawnSync('strace', ['-V']).status === 0;
if (!hasStrace) console.warn('skipped: the executor syscall checks need strace (apt-get install strace)');

/** One strace file per thread (-ff: no line split by another thread's call), timed (-ttt). */
function traceThreads(mode: string): { out: any; executors: string[][] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-strace-'));
  try {
    const r = spawnSync('strace', ['-f', '-ff', '-qq', '-ttt', '-e', 'trace=clone,clone3,epoll_wait,sched_setscheduler',
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

/** The call's return value and its last argument (strace pads before ' = '). */
function returned(line: string): { value: string; lastArg: string } {
  const eq = line.lastIndexOf(' = ');
  const close = line.lastIndexOf(')', eq);
  const value = line.slice(eq + 3).split(' ')[0];
  return { value, lastArg: line.slice(line.lastIndexOf(', ', close) + 2, close) };
}

interface Start { thread: number; at: number; pid: number; policy: string }

/**
 * Every child start of every executor thread with the policy its thread ran
 * then, and the policy of every sleep (an epoll_wait with a timeout other
 * than 0).
 */
function starts(executors: string[][]): { starts: Start[]; sleepPolicies: string[] } {
  const all: Start[] = [];
  const sleepPolicies: string[] = [];
  executors.forEach((lines, thread) => {
    let policy = 'SCHED_OTHER'; // as the thread was made
    for (const line of lines) {
      const sp = line.indexOf(' ');
      const at = Number(line.slice(0, sp));
      const call = line.slice(sp + 1);
      if (call.startsWith('sched_setscheduler(')) {
        policy = call.includes('SCHED_BATCH') ? 'SCHED_BATCH' : 'SCHED_OTHER';
      } else if (call.startsWith('clone(') && call.includes('CLONE_VFORK')) {
        all.push({ thread, at, pid: Number(returned(call).value), policy });
      } else if (call.startsWith('epoll_wait(') && returned(call).lastArg !== '0') {
        sleepPolicies.push(policy);
      }
    }
  });
  return { starts: all, sleepPolicies };
}

describe.skipIf(!hasStrace)('executor syscalls', () => {
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
      const { starts: all, sleepPolicies } = starts(executors);
      expect(all.length).toBeGreaterThanOrEqual(mode === 'sequential' ? 22 : 24);
      expect(all.filter((s) => s.policy !== 'SCHED_OTHER')).toEqual([]);
      expect(sleepPolicies.length).toBeGreaterThan(0);
      expect(sleepPolicies.filter((p) => p !== 'SCHED_BATCH')).toEqual([]);
    }, 60_000);
  }
});
