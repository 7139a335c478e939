// The calibration of `noshell bench --scale` (issue 19): a real `noshell run`
// at saturation against check_dummy gives a capacity, and leaves neither its
// process nor its checks file behind.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { measureCapacity, MIN_CAPACITY } from '../../src/bench/scale/scale-capacity';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const CHECK_DUMMY = '/usr/lib/nagios/plugins/check_dummy';

describe.skipIf(!existsSync(CHECK_DUMMY))('measureCapacity', () => {
  it('counts the results of a noshell run at saturation, then stops it and removes its directory', async () => {
    const spawned: { pid: number; checks: number; dir: string }[] = [];
    const c = await measureCapacity(CLI, 100, (pid, checks, dir) => spawned.push({ pid, checks, dir }));
    expect(Number.isFinite(c.resultsPerSec)).toBe(true);
    expect(c.resultsPerSec).toBeGreaterThan(MIN_CAPACITY);
    expect(c.resultsPerSec).toBeCloseTo((c.results * 1000) / c.countedMs, 9);
    // 2,000 checks due every second: far more than 2 cores run, so the count is the machine's, not the offer's.
    expect(c.resultsPerSec).toBeLessThan(c.checks / (c.intervalMs / 1000));
    expect(spawned).toHaveLength(1);
    expect(spawned[0].checks).toBe(c.checks);
    expect(existsSync(`/proc/${spawned[0].pid}`), `pid ${spawned[0].pid}`).toBe(false);
    expect(existsSync(spawned[0].dir), spawned[0].dir).toBe(false);
  }, 30_000);
});
