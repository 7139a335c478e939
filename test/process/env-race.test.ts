// Issue 17: a Worker with env: SHARE_ENV that kept changing process.env
// while the main thread ran execs crashed the process (SIGSEGV: strdup(NULL)
// in the environment snapshot) or made execve fail with EFAULT (the child
// was handed environ itself while setenv reallocated it). Each case runs
// test/env-race/race.js in its own Node process: the switches it needs are
// read when the library loads, and a crash must not take vitest down.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { binding } from '../../src/binding/binding';

const script = path.resolve(__dirname, '..', 'env-race', 'race.js');

function race(mode: string, count: number, env: Record<string, string> = {}): Record<string, unknown> {
  const r = spawnSync(process.execPath, [script, mode, String(count)], {
    env: { ...process.env, ...env }, encoding: 'utf8', timeout: 100_000, killSignal: 'SIGKILL',
  });
  // Survived: no signal (SIGSEGV before the fix), a clean exit, one report.
  expect({ signal: r.signal, status: r.status, stderr: r.stderr }).toEqual({ signal: null, status: 0, stderr: '' });
  return JSON.parse(r.stdout);
}

function expectClean(out: Record<string, unknown>, count: number): void {
  // Every exec exited 0 and printed an environment holding the variables the
  // main thread set before, with no torn entry; nothing was left behind.
  expect(out).toMatchObject({ ok: count, failed: 0, bad: [], fdsLeaked: 0, childrenLeft: 0 });
  // The worker really changed the environment meanwhile.
  expect(out.churned).toBeGreaterThan(0);
}

describe('a SHARE_ENV worker changing process.env during execs', () => {
  it('this Node has the environment lock the addon takes (else JS copies process.env)', () => {
    expect(binding.envLocked).toBe(true);
  });

  it('2,000 execFile on the executor: the process survives, every child sees a whole environment', () => {
    expectClean(race('exec', 2000), 2000);
  }, 120_000);

  it('2,000 execFile on the event-loop path (NOSHELL_NO_EXECUTOR=1): no EFAULT, no torn environment', () => {
    expectClean(race('exec', 2000, { NOSHELL_NO_EXECUTOR: '1' }), 2000);
  }, 120_000);

  it.each(['posix_spawn', 'vfork', 'fork'])('spawn() with method %s: 500 children, each with a whole environment', (method) => {
    expectClean(race(method, 500), 500);
  }, 120_000);

  it('without the lock (NOSHELL_NO_ENV_LOCK=1) JS copies process.env: exec and spawn stay whole', () => {
    expectClean(race('exec', 1000, { NOSHELL_NO_ENV_LOCK: '1' }), 1000);
    expectClean(race('vfork', 300, { NOSHELL_NO_ENV_LOCK: '1', NOSHELL_NO_EXECUTOR: '1' }), 300);
  }, 120_000);
});
