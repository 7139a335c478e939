// The loop delay of `noshell bench` (src/bench/spawn/loop-delay.ts, measure.ts).
// perf_hooks.monitorEventLoopDelay, used before, showed 0.6 ms of "loop
// delay p99" beside 46 ms blocked per call: a stall before its first tick
// was never counted. A stall anywhere in the window must show in full.
import { describe, expect, it } from 'vitest';
import type { Driver } from '../../src/bench/spawn/drivers';
import { LoopDelay } from '../../src/bench/spawn/loop-delay';
import { measure } from '../../src/bench/spawn/measure';

function busy(ms: number): void {
  const t = performance.now();
  while (performance.now() - t < ms) {
    // spin: the event loop is blocked
  }
}

describe('bench loop delay', () => {
  it('counts a stall at the very start of the window, before any tick', () => {
    const d = new LoopDelay();
    d.start();
    busy(50);
    const s = d.stop();
    expect(s.samples).toBe(1);
    expect(s.maxMs).toBeGreaterThanOrEqual(48);
  });

  it('reports small delays on an idle loop and stops its timer', async () => {
    const d = new LoopDelay();
    d.start();
    await new Promise((r) => setTimeout(r, 100));
    const s = d.stop();
    expect(s.samples).toBeGreaterThan(20);
    expect(s.p50Ms).toBeLessThan(5);
    expect(s.p50Ms).toBeLessThanOrEqual(s.p99Ms);
    expect(s.p99Ms).toBeLessThanOrEqual(s.maxMs);
  });

  it('in a measurement, never shows less loop delay than the longest blocked call (concurrency 16, calls blocking 15 ms)', async () => {
    const blocking: Driver = {
      id: 'blocking', concurrent: true,
      make: (blocked) => async () => {
        const t = performance.now();
        busy(15);
        blocked.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 2));
      },
    };
    const m = await measure(blocking, { id: 'none', argv: ['x'] }, 16, 0, 0.15);
    expect(m.blockedMaxMs!).toBeGreaterThanOrEqual(15);
    // Late by: a stall that starts just after a tick delays the next one by the stall less the 1 ms interval.
    expect(m.loopDelayMaxMs!).toBeGreaterThanOrEqual(m.blockedMaxMs! - 1);
    expect(m.loopDelayP99Ms!).toBeGreaterThanOrEqual(m.blockedP50Ms!);
  });
});
