// NOSHELL_LOOP_DELAY_REPORT (issue 19): noshell run's own event-loop delay,
// one stderr line per window; a block shows in the window it ended in.
import { describe, expect, it } from 'vitest';
import { loopDelayInterval, parseLoopDelayLine, startLoopDelayReport, type LoopDelayWindow } from '../src/loop-delay-report';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('loop-delay report', () => {
  it('reports a 60 ms block as ~60 ms in one window, with the heap and RSS', async () => {
    const lines: string[] = [];
    const report = startLoopDelayReport(50, (l) => lines.push(l));
    await sleep(120);
    const until = performance.now() + 60;
    while (performance.now() < until);
    await sleep(120);
    report.stop();
    const windows = lines.map(parseLoopDelayLine);
    expect(windows.every((w) => w !== null), lines.join('')).toBe(true);
    const max = Math.max(...(windows as LoopDelayWindow[]).map((w) => w.maxMs));
    expect(max).toBeGreaterThanOrEqual(55);
    // A loaded machine adds to a block, never takes from it; 1 s would be no measurement.
    expect(max).toBeLessThan(1000);
    for (const w of windows as LoopDelayWindow[]) {
      expect(w.heapUsedBytes).toBeGreaterThan(0);
      expect(w.rssBytes).toBeGreaterThan(w.heapUsedBytes);
      expect(Number.isNaN(Date.parse(w.time))).toBe(false);
    }
    const n = lines.length;
    await sleep(120);
    expect(lines).toHaveLength(n);
  });

  it('takes a window of 10 ms to 1 h from the environment, nothing when unset or empty', () => {
    expect(loopDelayInterval({})).toBeNull();
    expect(loopDelayInterval({ NOSHELL_LOOP_DELAY_REPORT: '' })).toBeNull();
    expect(loopDelayInterval({ NOSHELL_LOOP_DELAY_REPORT: '1000' })).toBe(1000);
    for (const bad of ['5', '1.5', 'x', '-100', '3600001']) {
      expect(() => loopDelayInterval({ NOSHELL_LOOP_DELAY_REPORT: bad }), bad).toThrow(/NOSHELL_LOOP_DELAY_REPORT must be/);
    }
  });

  it('other stderr lines and broken JSON are not windows', () => {
    expect(parseLoopDelayLine('noshell run: 5 checks from f')).toBeNull();
    expect(parseLoopDelayLine('noshell run: loop-delay {"maxMs":')).toBeNull();
  });
});
