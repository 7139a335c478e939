import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CheckRunner, runCheck, type CheckOptions, type CheckResult, type CheckRunResult, type Clock } from '../../src/index';
import { childProcesses, PROBE, waitFor } from '../helpers';

/** Scheduling time is ours to move; the checks themselves run for real. */
class FakeClock implements Clock {
  t = 1_000_000;
  #timers = new Map<number, { at: number; fn: () => void }>();
  #id = 0;
  now(): number {
    return this.t;
  }
  setTimer(fn: () => void, ms: number): unknown {
    this.#timers.set(++this.#id, { at: this.t + ms, fn });
    return this.#id;
  }
  clearTimer(h: unknown): void {
    this.#timers.delete(h as number);
  }
  get pending(): number {
    return this.#timers.size;
  }
  /** Fires due timers in time order up to `ms` from now. */
  advance(ms: number): void {
    const target = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.#timers) if (e[1].at <= target && (next === undefined || e[1].at < next[1].at)) next = e;
      if (next === undefined) break;
      this.#timers.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
    }
    this.t = target;
  }
}

function collect(runner: CheckRunner): CheckRunResult[] {
  const results: CheckRunResult[] = [];
  runner.on('result', (r: CheckRunResult) => results.push(r));
  return results;
}

const OK = [PROBE, 'exit', '0'];

describe('CheckRunner scheduling', () => {
  it('spreads first runs over the interval, then runs on the grid without drift', async () => {
    const clock = new FakeClock();
    const t0 = clock.t;
    const runner = new CheckRunner({ clock });
    const results = collect(runner);
    for (const id of ['a', 'b', 'c', 'd']) runner.add({ id, command: OK, interval: 1000 });
    runner.start();
    for (let step = 0; step < 12; step++) {
      clock.advance(step === 0 ? 0 : 250);
      // Let each due run finish (for real) before moving the clock on.
      expect(await waitFor(() => results.length === step + 1)).toBe(true);
      // A run also takes clock time: it must not push the schedule.
      clock.t += 7;
    }
    await runner.stop();
    const byId = (id: string) => results.filter((r) => r.id === id).map((r) => r.scheduledAt - t0);
    expect(byId('a')).toEqual([0, 1000, 2000]);
    expect(byId('b')).toEqual([250, 1250, 2250]);
    expect(byId('c')).toEqual([500, 1500, 2500]);
    expect(byId('d')).toEqual([750, 1750, 2750]);
    expect(results.every((r) => r.state === 0 && r.stateType === 'HARD' && r.attempt === 1)).toBe(true);
  });

  it('an option a definition leaves undefined keeps the runner default (issue 17: the undefined overwrote it)', async () => {
    const clock = new FakeClock();
    const runner = new CheckRunner({ clock, timeout: 200 });
    const results = collect(runner);
    runner.add({ id: 'slow', command: ['sleep', '5'], interval: 60_000, timeout: undefined });
    runner.start();
    clock.advance(60_000);
    expect(await waitFor(() => results.length === 1, 4000)).toBe(true);
    await runner.stop();
    expect(results[0]).toMatchObject({ timedOut: true, state: 3 });
    expect(results[0].durationMs).toBeLessThan(2000);
  });

  it('never runs one check twice at once; slots missed while it ran are skipped', async () => {
    const clock = new FakeClock();
    const t0 = clock.t;
    const runner = new CheckRunner({ clock });
    const results = collect(runner);
    runner.add({ id: 'slow', command: ['sleep', '0.3'], interval: 100 });
    runner.start();
    clock.advance(0);
    expect(runner.stats().running).toBe(1);
    clock.advance(1000); // ten slots pass while it runs
    expect(runner.stats().running).toBe(1);
    expect(await waitFor(() => results.length === 1)).toBe(true);
    expect(runner.stats()).toMatchObject({ running: 0, skipped: 10 });
    clock.advance(100);
    expect(await waitFor(() => results.length === 2)).toBe(true);
    await runner.stop();
    expect(results.map((r) => r.scheduledAt - t0)).toEqual([0, 1100]);
  });

  it('retries non-OK states at retryInterval, then HARD, then back on the grid', async () => {
    const clock = new FakeClock();
    const t0 = clock.t;
    const runner = new CheckRunner({ clock });
    const results = collect(runner);
    runner.add({ id: 'bad', command: [PROBE, 'exit', '2'], interval: 1000, retryInterval: 100, maxAttempts: 3 });
    runner.start();
    for (const [ms, n] of [[0, 1], [100, 2], [100, 3], [800, 4]] as const) {
      clock.advance(ms);
      expect(await waitFor(() => results.length === n)).toBe(true);
    }
    await runner.stop();
    expect(results.map((r) => [r.scheduledAt - t0, r.attempt, r.stateType, r.stateName])).toEqual([
      [0, 1, 'SOFT', 'CRITICAL'],
      [100, 2, 'SOFT', 'CRITICAL'],
      [200, 3, 'HARD', 'CRITICAL'],
      [1000, 3, 'HARD', 'CRITICAL'],
    ]);
    // Retries are not overruns.
    expect(runner.stats().skipped).toBe(0);
  });

  it('keeps to the concurrency limit with a queue; latency counts the wait', async () => {
    const clock = new FakeClock();
    const runner = new CheckRunner({ clock, concurrency: 2 });
    const results = collect(runner);
    for (let i = 0; i < 5; i++) runner.add({ id: `c${i}`, command: ['sleep', '0.2'], interval: 60_000 });
    runner.start();
    clock.advance(60_000 * 0.9); // every first run is due now
    expect(runner.stats()).toMatchObject({ running: 2, queued: 3 });
    let maxRunning = 0;
    runner.on('result', () => {
      maxRunning = Math.max(maxRunning, runner.stats().running);
      clock.t += 50;
    });
    expect(await waitFor(() => results.length === 5, 10_000)).toBe(true);
    await runner.stop();
    expect(maxRunning).toBeLessThanOrEqual(2);
    expect(Math.max(...results.map((r) => r.latencyMs))).toBeGreaterThan(0);
    expect(runner.stats().completed).toBe(5);
  });
});

describe('CheckRunner edge cases', () => {
  it('remove() + add() of a running check never runs two at once', async () => {
    const clock = new FakeClock();
    const runner = new CheckRunner({ clock });
    const results = collect(runner);
    runner.add({ id: 'a', command: ['sleep', '0.3'], interval: 100 });
    runner.start();
    clock.advance(0);
    expect(runner.stats().running).toBe(1);
    runner.remove('a');
    runner.add({ id: 'a', command: OK, interval: 100 });
    clock.advance(500);
    expect(runner.stats().running).toBe(1);
    expect(await waitFor(() => results.length === 1)).toBe(true);
    clock.advance(200);
    expect(await waitFor(() => results.length === 2)).toBe(true);
    await runner.stop();
    expect(results.map((r) => r.command)).toEqual(['sleep 0.3', `${PROBE} exit 0`]);
  });

  it('checks removed while queued never run; re-added namesakes run once; queued counts only the live ones', async () => {
    const clock = new FakeClock();
    const runner = new CheckRunner({ clock, concurrency: 1 });
    const results = collect(runner);
    for (let i = 0; i < 8; i++) runner.add({ id: `q${i}`, command: ['sleep', '0.1'], interval: 60_000 });
    runner.start();
    clock.advance(60_000 * 0.9); // all due: one runs, seven queue
    expect(runner.stats()).toMatchObject({ running: 1, queued: 7 });
    for (const id of ['q2', 'q4', 'q5']) runner.remove(id);
    expect(runner.stats().queued).toBe(4);
    // A namesake of a queued check that was removed: a new check, scheduled on its own.
    runner.add({ id: 'q4', command: OK, interval: 60_000 });
    expect(await waitFor(() => results.length === 5, 10_000)).toBe(true);
    expect(runner.stats()).toMatchObject({ running: 0, queued: 0 });
    clock.advance(60_000);
    expect(await waitFor(() => results.some((r) => r.id === 'q4'), 10_000)).toBe(true);
    await runner.stop();
    const ran = results.map((r) => r.id);
    for (const id of ['q2', 'q5']) expect(ran).not.toContain(id);
    expect(ran.filter((id) => id === 'q4')).toEqual(['q4']);
    expect(results.find((r) => r.id === 'q4')!.command).toBe(`${PROBE} exit 0`);
  });

  it('stop({ deadline }) also ends runs of removed checks', async () => {
    const runner = new CheckRunner();
    runner.add({ id: 'gone', command: ['sleep', '30'], interval: 60_000 });
    runner.start();
    expect(await waitFor(() => runner.stats().running === 1)).toBe(true);
    runner.remove('gone');
    const t = Date.now();
    await runner.stop({ deadline: 100 });
    expect(Date.now() - t).toBeLessThan(5000);
    expect(childProcesses()).toEqual([]);
  });

  it('huge intervals do not spin the timer; sub-millisecond ones are refused', () => {
    const delays: number[] = [];
    const clock = new FakeClock();
    const setTimer = clock.setTimer.bind(clock);
    clock.setTimer = (fn, ms) => {
      delays.push(ms);
      return setTimer(fn, ms);
    };
    const runner = new CheckRunner({ clock });
    runner.add({ id: 'a', command: OK, interval: 60 * 24 * 3600_000 });
    runner.add({ id: 'b', command: OK, interval: 61 * 24 * 3600_000 });
    runner.start();
    expect(Math.max(...delays)).toBeLessThanOrEqual(2 ** 31 - 1);
    expect(delays.length).toBeLessThan(3);
    void runner.stop();
    expect(() => new CheckRunner().add({ id: 'x', command: OK, interval: 0.0001 })).toThrow(TypeError);
  });

  it('a throwing result listener neither stalls the runner nor stop()', () => {
    const entry = require.resolve('../../dist/index.js');
    const script = `
      const { CheckRunner } = require(${JSON.stringify(entry)});
      let uncaught = 0;
      process.on('uncaughtException', () => uncaught++);
      const runner = new CheckRunner({ concurrency: 1 });
      let results = 0;
      runner.on('result', () => { results++; throw new Error('listener bug'); });
      for (const id of ['a', 'b', 'c']) runner.add({ id, command: ['/bin/true'], interval: 60000 });
      runner.start();
      const t = setInterval(async () => {
        if (results < 1) return;
        clearInterval(t);
        await runner.stop();
        console.log(JSON.stringify({ results, uncaught, running: runner.stats().running }));
      }, 20);`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.running).toBe(0);
    expect(out.uncaught).toBe(out.results);
  });
});

describe('CheckRunner stop, stats, metrics', () => {
  it('stop() waits for running checks, or kills them after a deadline', async () => {
    const runner = new CheckRunner();
    const results = collect(runner);
    runner.add({ id: 'long', command: ['sleep', '30'], interval: 60_000 });
    runner.add({ id: 'short', command: OK, interval: 60_000 });
    runner.start();
    // Both first runs are spread over the minute: the first one starts now.
    expect(await waitFor(() => runner.stats().running === 1)).toBe(true);
    const t = Date.now();
    await runner.stop({ deadline: 100 });
    expect(Date.now() - t).toBeLessThan(5000);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ id: 'long', state: 3 });
    expect(runner.stats().running).toBe(0);
    expect(childProcesses()).toEqual([]);
  });

  it('stats() and metrics() say the same; metrics parse as Prometheus text', async () => {
    const clock = new FakeClock();
    const runner = new CheckRunner({ clock });
    const results = collect(runner);
    runner.add({ id: 'ok', command: OK, interval: 1000 });
    runner.add({ id: 'warn', command: [PROBE, 'exit', '1'], interval: 1000 });
    runner.add({ id: 'shell', command: `${PROBE} exit 0 | cat $NOSHELL_UNSET`, interval: 1000 });
    runner.add({ id: 'missing', command: ['/nonexistent/check'], interval: 1000 });
    runner.start();
    clock.advance(999);
    expect(await waitFor(() => results.length === 4)).toBe(true);
    await runner.stop();
    const s = runner.stats();
    expect(s).toMatchObject({ checks: 4, completed: 4, viaShell: 1, spawnErrors: 1, byState: { OK: 2, WARNING: 1, CRITICAL: 0, UNKNOWN: 1 } });

    const samples = new Map<string, number>();
    for (const line of runner.metrics().trimEnd().split('\n')) {
      if (line.startsWith('#')) {
        expect(line).toMatch(/^# (HELP|TYPE) noshell_\w+ .+$/);
        continue;
      }
      const m = /^(noshell_\w+(?:\{[^}]*\})?) (\S+)$/.exec(line);
      expect(m, line).not.toBeNull();
      samples.set(m![1], Number(m![2]));
    }
    expect(samples.get('noshell_checks')).toBe(4);
    expect(samples.get('noshell_check_results_total{state="OK"}')).toBe(2);
    expect(samples.get('noshell_check_results_total{state="UNKNOWN"}')).toBe(1);
    expect(samples.get('noshell_check_spawn_errors_total')).toBe(1);
    expect(samples.get('noshell_check_via_shell_total')).toBe(1);
    expect(samples.get('noshell_check_execution_seconds{quantile="0.5"}')).toBeCloseTo(s.executionMs.p50 / 1000, 9);
  });

  it('validates definitions', () => {
    const runner = new CheckRunner();
    expect(() => runner.add({ id: '', command: OK, interval: 1 })).toThrow(TypeError);
    expect(() => runner.add({ id: 'x', command: OK, interval: 0 })).toThrow(TypeError);
    expect(() => runner.add({ id: 'x', command: 5 as never, interval: 10 })).toThrow(TypeError);
    expect(() => runner.add({ id: 'x', command: OK, interval: 10, maxAttempts: 0 })).toThrow(TypeError);
    runner.add({ id: 'x', command: OK, interval: 10 });
    expect(() => runner.add({ id: 'x', command: OK, interval: 10 })).toThrow(/exists/);
    expect(runner.remove('x')).toBe(true);
    expect(runner.remove('x')).toBe(false);
    expect(() => new CheckRunner({ concurrency: 0 })).toThrow(TypeError);
  });
});

describe('CheckRunner.replace', () => {
  const CRIT = [PROBE, 'exit', '2'];

  /** A started runner (fake clock) whose check `id` has had its first result, CRITICAL. */
  async function afterFirstResult(id: string, interval: number): Promise<{ clock: FakeClock; runner: CheckRunner; results: CheckRunResult[] }> {
    const clock = new FakeClock();
    const runner = new CheckRunner({ clock });
    const results = collect(runner);
    runner.add({ id, command: CRIT, interval });
    runner.start();
    clock.advance(0);
    expect(await waitFor(() => results.length === 1)).toBe(true);
    return { clock, runner, results };
  }

  it("keeps the last result and its series until the new definition's first result (a reload's changed check)", async () => {
    const { clock, runner, results } = await afterFirstResult('disk', 3_600_000);
    const changedAt = runner.checkStatus()[0].lastStateChangeAt;
    runner.replace({ id: 'disk', command: OK, interval: 3_600_000 });
    // Before its first run (somewhere in its hour): the last result is still there, with its state series.
    const before = runner.checkStatus();
    expect(before).toHaveLength(1);
    expect(before[0].definition.command).toEqual(OK);
    expect(before[0].last).toMatchObject({ state: 2, stateName: 'CRITICAL' });
    expect(before[0].lastStateChangeAt).toBe(changedAt);
    expect(runner.metrics()).toMatch(/^noshell_check_state\{check="disk"\} 2$/m);
    // Its first run: the new result replaces it, and the state change is dated.
    clock.advance(3_600_000);
    expect(await waitFor(() => results.length === 2)).toBe(true);
    await runner.stop();
    const after = runner.checkStatus()[0];
    expect(after.last).toMatchObject({ state: 0, stateName: 'OK' });
    expect(after.lastStateChangeAt).toBe(results[1].finishedAt);
    expect(runner.metrics()).toMatch(/^noshell_check_state\{check="disk"\} 0$/m);
  });

  it('remove() then add() starts with no result (a new check), as before', async () => {
    const { runner } = await afterFirstResult('disk', 3_600_000);
    runner.remove('disk');
    runner.add({ id: 'disk', command: OK, interval: 3_600_000 });
    expect(runner.checkStatus()[0].last).toBeNull();
    expect(runner.metrics()).not.toMatch(/^noshell_check_state\{check="disk"\}/m);
    await runner.stop();
  });

  it('replaced while it runs: the replacement shows the result of the run that was in progress', async () => {
    const { clock, runner, results } = await afterFirstResult('x', 1000);
    runner.replace({ id: 'x', command: ['/bin/sh', '-c', 'sleep 0.3; exit 1'], interval: 1000 });
    expect(runner.checkStatus()[0].last).toMatchObject({ state: 2 });
    clock.advance(1000);
    const running = await waitFor(() => runner.checkStatus()[0].running, 2000);
    expect(running).toBe(true);
    runner.replace({ id: 'x', command: OK, interval: 3_600_000 });
    expect(await waitFor(() => results.length === 2, 5000)).toBe(true);
    expect(results[1]).toMatchObject({ id: 'x', state: 1 });
    expect(runner.checkStatus()[0].last).toMatchObject({ state: 1 });
    await runner.stop();
  });
});

describe('CheckRunner tick: checks due between ticks start together at the next', () => {
  /** A fake clock that records the instant (from t0) each timer is set for. */
  function tickClock(): { clock: FakeClock; t0: number; timers: number[] } {
    const clock = new FakeClock();
    const t0 = clock.t;
    const timers: number[] = [];
    const setTimer = clock.setTimer.bind(clock);
    clock.setTimer = (fn, ms) => {
      timers.push(clock.t + ms - t0);
      return setTimer(fn, ms);
    };
    return { clock, t0, timers };
  }

  /** 20 checks of 1 s (due every 50 ms) over 2 s of clock, each run finished (for real) before the clock moves on. */
  async function twoSeconds(tick: number | string | undefined): Promise<{ results: CheckRunResult[]; t0: number; fired: number[] }> {
    const { clock, t0, timers } = tickClock();
    const runner = new CheckRunner({ clock, tick, concurrency: 64 });
    const results = collect(runner);
    for (let i = 0; i < 20; i++) runner.add({ id: `c${String(i).padStart(2, '0')}`, command: OK, interval: 1000 });
    runner.start();
    const fired: number[] = [];
    for (let ms = 0; ms <= 2000; ms += 10) {
      const before = timers.length;
      clock.advance(ms === 0 ? 0 : 10);
      expect(await waitFor(() => runner.stats().running === 0, 5000)).toBe(true);
      // A timer set for now or earlier fired in this step.
      for (const at of timers.slice(0, before)) if (at <= clock.t - t0 && at > clock.t - t0 - 10) fired.push(at);
    }
    await runner.stop();
    return { results, t0, fired: [...new Set(fired)] };
  }

  it('starts each check at the first tick at or after it is due; the grid and scheduledAt stay the check\'s own', async () => {
    const { results, t0 } = await twoSeconds(100);
    // c00 at 0, 1000 and 2000; each other check twice (c19's second run, due at 1950, starts at 2000).
    expect(results.length).toBe(41);
    for (const r of results) {
      const due = r.scheduledAt - t0;
      const started = r.startedAt - t0;
      // Due every 50 ms: c00 at 0, c01 at 50, … and one interval later the same.
      expect(due % 1000).toBe(Number(r.id.slice(1)) * 50);
      expect(started % 100, r.id).toBe(0);
      expect(started).toBeGreaterThanOrEqual(due);
      expect(started - due).toBeLessThan(100);
      expect(r.latencyMs).toBe(started - due);
    }
    // The odd ones start late, by half a tick.
    expect(results.filter((r) => r.latencyMs === 50)).toHaveLength(20);
  });

  it('one timer per tick instead of one per check ("100ms" as a duration); without a tick, one per check', async () => {
    const ticked = await twoSeconds('100ms');
    expect(ticked.fired.length).toBeLessThanOrEqual(21);
    expect(ticked.fired.every((at) => at % 100 === 0)).toBe(true);
    const exact = await twoSeconds(undefined);
    expect(exact.results.length).toBe(41);
    expect(exact.fired.length).toBeGreaterThanOrEqual(40);
    expect(exact.results.every((r) => r.latencyMs === 0)).toBe(true);
    // A tick of 0 is no tick.
    expect((await twoSeconds(0)).results.every((r) => r.latencyMs === 0)).toBe(true);
  });

  it('starts queued checks of one tick together, each as soon as a slot frees', async () => {
    const { clock } = tickClock();
    const runner = new CheckRunner({ clock, tick: 500, concurrency: 1 });
    const results = collect(runner);
    // Five checks of 1 s, due at 0, 200, 400, 600, 800: ticks at 0, 500 (two), 1000 (two).
    for (let i = 0; i < 5; i++) runner.add({ id: `s${i}`, command: OK, interval: 1000 });
    runner.start();
    clock.advance(499);
    expect(await waitFor(() => results.length === 1, 5000)).toBe(true);
    expect(runner.stats().queued).toBe(0);
    clock.advance(1);
    // Both due by 500 ran on that tick, one after the other, with the clock standing at 500.
    expect(await waitFor(() => results.length === 3, 5000)).toBe(true);
    expect(results.slice(1).map((r) => [r.id, r.startedAt - results[0].startedAt])).toEqual([['s1', 500], ['s2', 500]]);
    await runner.stop();
  });

  it('takes 0, 1 ms to 60 s, as ms or a duration; refuses the rest with the value', () => {
    for (const tick of [0, 1, 50, '50ms', '1s', 60_000, '1m', undefined]) expect(() => new CheckRunner({ tick })).not.toThrow();
    for (const tick of [-1, 0.5, 60_001, '2m', NaN, Infinity]) expect(() => new CheckRunner({ tick }), String(tick)).toThrow(/tick must be 0 or from 1 to 60000 ms|tick: expected a duration/);
    expect(() => new CheckRunner({ tick: 'soon' })).toThrow('tick: expected a duration like 500, "250ms", "10s" or "5m", got "soon"');
    expect(() => new CheckRunner({ tick: null as unknown as number })).toThrow(TypeError);
    expect(() => new CheckRunner({ tick: 0.5 })).toThrow('tick must be 0 or from 1 to 60000 ms, got 0.5');
    // Values named as written, strings quoted and cut.
    expect(() => new CheckRunner({ tick: '0.5ms' })).toThrow('tick must be 0 or from 1 to 60000 ms, got "0.5ms"');
    expect(() => new CheckRunner({ tick: NaN })).toThrow('got NaN');
    expect(() => new CheckRunner({ tick: -Infinity })).toThrow('got -Infinity');
    expect(() => new CheckRunner({ tick: 10n as unknown as number })).toThrow('got 10n');
    const huge = '9'.repeat(16 * 1024 * 1024);
    let said = '';
    try {
      new CheckRunner({ tick: huge });
    } catch (e) {
      said = (e as Error).message;
    }
    expect(said).toMatch(/^tick must be 0 or from 1 to 60000 ms, got "9+"… \(16777216 characters\)$/);
    expect(said.length).toBeLessThan(300);
  });

  it('a check whose interval or retry interval is under two ticks starts when due, on time, beside checks on ticks', async () => {
    const { clock, t0 } = tickClock();
    const runner = new CheckRunner({ clock, tick: 50 });
    const results = collect(runner);
    // First runs spread: retry at 0, fast at 6.67 ms, slow at 66.7 ms.
    runner.add({ id: 'retry', command: [PROBE, 'exit', '2'], interval: 1000, retryInterval: 30, maxAttempts: 5 });
    runner.add({ id: 'fast', command: OK, interval: 20 });
    runner.add({ id: 'slow', command: OK, interval: 100 });
    runner.start();
    for (let ms = 0; ms <= 400; ms += 5) {
      clock.advance(ms === 0 ? 0 : 5);
      expect(await waitFor(() => runner.stats().running === 0, 5000)).toBe(true);
    }
    await runner.stop();
    const of = (id: string) => results.filter((r) => r.id === id);
    // Every 20 ms when due, none skipped: 6.67, 26.67, … 386.67.
    const fast = of('fast').map((r) => r.startedAt - t0);
    expect(fast).toHaveLength(20);
    fast.forEach((at, i) => expect(at).toBeCloseTo(20 / 3 + i * 20, 6));
    expect(of('fast').every((r) => r.latencyMs === 0)).toBe(true);
    // A check of 1 s whose retries come every 30 ms: they too run when due.
    expect(of('retry').map((r) => [r.stateType, r.startedAt - t0])).toEqual([['SOFT', 0], ['SOFT', 30], ['SOFT', 60], ['SOFT', 90], ['HARD', 120]]);
    // 100 ms is two ticks: started at most a tick late, at the next tick or at a wake-up for another check
    // (here fast's, due at the same instants), never before it is due.
    expect(of('slow')).toHaveLength(4);
    for (const r of of('slow')) expect(r.latencyMs >= 0 && r.latencyMs < 50, String(r.latencyMs)).toBe(true);
    expect(runner.stats().skipped).toBe(0);
  });

  it("on Node's own timers a tick takes one wake-up, not one and another for the checks due in its last ms", async () => {
    const real = globalThis.setTimeout;
    let timers = 0;
    const counting = ((fn: () => void, ms?: number) => {
      timers++;
      return real(fn, ms);
    }) as typeof setTimeout;
    const runner = new CheckRunner({ tick: 50, concurrency: 64 });
    for (let i = 0; i < 100; i++) runner.add({ id: `t${i}`, command: OK, interval: 1000 });
    const results = collect(runner);
    globalThis.setTimeout = counting;
    try {
      runner.start();
      await new Promise((r) => real(r, 1500));
    } finally {
      globalThis.setTimeout = real;
    }
    await runner.stop();
    expect(results.length).toBeGreaterThanOrEqual(100);
    for (const r of results) expect(r.latencyMs).toBeGreaterThanOrEqual(0);
    // 30 ticks in 1.5 s; woken again for a tick's last ms, it took about 1.8 timers a tick.
    expect(timers).toBeLessThanOrEqual(36);
  });
});

describe('durations with units, as checks files take them', () => {
  it('interval and retryInterval take "1m" and "10s"; checkStatus() gives them in ms; a bad one is refused with the value', () => {
    const runner = new CheckRunner();
    runner.add({ id: 'a', command: OK, interval: '1m', retryInterval: '10s' });
    runner.add({ id: 'b', command: OK, interval: 1500 });
    const status = runner.checkStatus();
    expect(status.map((s) => [s.definition.interval, s.definition.retryInterval])).toEqual([[60_000, 10_000], [1500, undefined]]);
    expect(runner.metrics()).toMatch(/^noshell_check_interval_seconds\{check="a"\} 60$/m);
    expect(() => runner.add({ id: 'c', command: OK, interval: 'soon' })).toThrow('interval of c: expected a duration like 500, "250ms", "10s" or "5m", got "soon"');
    expect(() => runner.add({ id: 'd', command: OK, interval: '0ms' })).toThrow('interval of d must be a number of milliseconds >= 1');
  });
});

describe("a runner's checks run as runCheck runs them (their options are checked once, on the first run)", () => {
  /** A run of each definition through a runner (real clock; first runs spread over 400 ms), by id. */
  async function runOnce(defs: Array<{ id: string; command: string | string[]; options?: CheckOptions }>): Promise<Map<string, CheckRunResult>> {
    const runner = new CheckRunner({ concurrency: 8 });
    const results = new Map<string, CheckRunResult>();
    runner.on('result', (r: CheckRunResult) => results.set(r.id, r));
    for (const d of defs) runner.add({ id: d.id, command: d.command, interval: 400, ...d.options });
    runner.start();
    expect(await waitFor(() => results.size === defs.length, 10_000)).toBe(true);
    await runner.stop({ deadline: 1000 });
    return results;
  }

  const pick = (r: CheckResult) => ({
    state: r.state, output: r.output, exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, truncated: r.truncated,
    command: r.command, viaShell: r.viaShell, spawnError: r.spawnError, stdout: r.stdout, stderr: r.stderr,
  });

  it('argv0, a timeout and its state, maxOutput, NAME=value words, pipelines, a missing plugin, a bad option', async () => {
    const defs: Array<{ id: string; command: string | string[]; options?: CheckOptions }> = [
      { id: 'argv0', command: ['/bin/sh', '-c', 'echo "$0"'], options: { argv0: 'renamed' } },
      { id: 'timeout', command: ['/bin/sleep', '5'], options: { timeout: 200, timeoutState: 2 } },
      { id: 'cut', command: ['/bin/sh', '-c', 'printf %s 0123456789abcdef'], options: { maxOutput: 10 } },
      { id: 'words', command: `NOSHELL_PLAN_WORD=7 /bin/sh -c 'echo "$NOSHELL_PLAN_WORD"'` },
      { id: 'pipeline', command: '/bin/echo abc | /usr/bin/tr a-c x-z' },
      { id: 'missing', command: ['/nonexistent/check_plan'] },
      { id: 'shell', command: '/bin/echo $((6 * 7))', options: { shell: 'auto' } },
      { id: 'bad', command: ['/bin/true'], options: { killSignal: 'SIGNOPE' as never } },
    ];
    const results = await runOnce(defs);
    const expected: Record<string, Partial<CheckResult>> = {
      argv0: { state: 0, output: 'renamed' },
      timeout: { state: 2, timedOut: true },
      cut: { state: 0, output: '0123456789', truncated: true },
      words: { state: 0, output: '7' },
      pipeline: { state: 0, output: 'xyz' },
      missing: { state: 3, spawnError: 'ENOENT' },
      shell: { state: 0, output: '42', viaShell: true },
    };
    for (const d of defs) {
      const mine = results.get(d.id)!;
      if (d.id === 'bad') {
        const err = await runCheck(d.command, d.options).catch((e: unknown) => e as Error);
        expect(err).toBeInstanceOf(TypeError);
        expect(mine).toMatchObject({ state: 3, spawnError: 'EINVAL', output: `Check definition error: ${(err as Error).message}` });
        continue;
      }
      expect(mine, d.id).toMatchObject(expected[d.id]);
      const alone = await runCheck(d.command, d.options);
      expect(pick(mine), d.id).toEqual(pick(alone));
    }
  });

  it('300 checks with options of their own (more than the runner keeps checked) each run with theirs', async () => {
    const defs = Array.from({ length: 300 }, (_, i) => ({ id: `own${i}`, command: ['/bin/sh', '-c', 'echo "$0"'], options: { argv0: `argv0-${i}` } }));
    const runner = new CheckRunner({ concurrency: 16 });
    const outputs = new Map<string, Set<string>>();
    runner.on('result', (r: CheckRunResult) => {
      const seen = outputs.get(r.id) ?? new Set<string>();
      seen.add(r.output);
      outputs.set(r.id, seen);
    });
    for (const d of defs) runner.add({ id: d.id, command: d.command, interval: 1000, ...d.options });
    runner.start();
    // Every check twice: the second runs come after the kept ones were let go.
    expect(await waitFor(() => outputs.size === 300 && runner.stats().completed >= 600, 20_000)).toBe(true);
    await runner.stop({ deadline: 1000 });
    for (let i = 0; i < 300; i++) expect([...outputs.get(`own${i}`)!]).toEqual([`argv0-${i}`]);
  });

  it('the environment is read at each run, with an env option and without', async () => {
    const runner = new CheckRunner();
    const seen: Record<string, string[]> = { plain: [], merged: [] };
    runner.on('result', (r: CheckRunResult) => seen[r.id].push(r.output));
    const show = ['/bin/sh', '-c', 'echo "$NOSHELL_PLAN_ENV ${NOSHELL_PLAN_OWN:-}"'];
    process.env.NOSHELL_PLAN_ENV = 'first';
    try {
      runner.add({ id: 'plain', command: show, interval: 150 });
      runner.add({ id: 'merged', command: show, interval: 150, env: { NOSHELL_PLAN_OWN: 'own' } });
      runner.start();
      expect(await waitFor(() => seen.plain.length >= 1 && seen.merged.length >= 1, 5000)).toBe(true);
      process.env.NOSHELL_PLAN_ENV = 'second';
      const [p, m] = [seen.plain.length, seen.merged.length];
      expect(await waitFor(() => seen.plain.length > p && seen.merged.length > m, 5000)).toBe(true);
      await runner.stop();
    } finally {
      delete process.env.NOSHELL_PLAN_ENV;
    }
    expect([seen.plain[0], seen.plain.at(-1)]).toEqual(['first', 'second']);
    expect([seen.merged[0], seen.merged.at(-1)]).toEqual(['first own', 'second own']);
  });
});
