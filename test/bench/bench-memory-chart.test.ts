// memory.svg (src/bench/spawn/memory-chart.ts): which panels and series it draws.
import { describe, expect, it } from 'vitest';
import type { Measurement } from '../../src/bench/spawn/measure';
import { DRIVER_ORDER, memoryChart } from '../../src/bench/spawn/memory-chart';
import { elements } from './svg-elements';

function m(driver: string, concurrency: number, heapMiB: number, spawnsPerSec: number): Measurement {
  return {
    driver, workload: 'true', concurrency, heapMiB, spawns: 1, seconds: 1, spawnsPerSec, parentCpuMsPer1k: 0, childCpuMsPer1k: 0,
    blockedP50Ms: 0, blockedP99Ms: 0, blockedMaxMs: 0, loopDelayP50Ms: 0, loopDelayP99Ms: 0, loopDelayMaxMs: 0, roundsPerSec: [],
  };
}

describe('memory.svg', () => {
  it('draws a panel per concurrency with a driver at two heaps, and only such drivers; a driver looks the same in both', () => {
    const rows = [
      m('C reference', 1, 0, 1500), m('C reference', 1, 1024, 1400), m('cp.exec', 1, 0, 300), m('cp.exec', 1, 1024, 25),
      m('cp.spawnSync', 1, 0, 320), m('cp.exec', 16, 0, 500), m('cp.exec', 16, 1024, 24), m('cp.spawn', 64, 0, 500),
    ];
    const svg = memoryChart(rows, 'true', '/bin/true')!;
    expect(elements(svg, 'g class="panel"').map((p) => p['data-title'])).toEqual(['one at a time', '16 at a time']);
    const series = elements(svg, 'g class="series"');
    expect(series.map((s) => s['data-series'])).toEqual(['C reference', 'cp.exec', 'cp.exec']);
    expect(series[1]['data-color']).toBe(series[2]['data-color']);
    expect(series[1]['data-marker']).toBe(series[2]['data-marker']);
    expect(memoryChart(rows.filter((r) => r.heapMiB === 0), 'true', '/bin/true')).toBeNull();
  });

  it('has a style for every driver of the bench', async () => {
    const { drivers } = await import('../../src/bench/spawn/drivers');
    expect(new Set(DRIVER_ORDER)).toEqual(new Set(['C reference', 'C reference[vfork]', ...Object.keys(drivers)]));
  });
});
