// memory.svg: spawns/s against the memory the parent holds, one panel per
// concurrency measured at more than one heap, one line per driver measured
// at more than one heap (a single point says nothing about memory).
import { lineChart, type Panel } from '../chart';
import type { Measurement } from './measure';
import { REFERENCE, REFERENCE_VFORK } from './plan';

/** Every driver keeps its colour and marker in every chart and panel. */
export const DRIVER_ORDER = [
  REFERENCE, 'noshell.execFile', 'cp.exec', 'noshell.execFile[loop]', 'noshell.runCheck', 'cp.execFile',
  'noshell.execFile[fork]', 'noshell.exec', 'cp.spawn', 'noshell.spawn', 'cp.spawnSync',
  'noshell.execFile[posix_spawn]', 'noshell.execFile[vfork]', REFERENCE_VFORK,
];

function styleOf(driver: string): number {
  const i = DRIVER_ORDER.indexOf(driver);
  return i === -1 ? DRIVER_ORDER.length : i;
}

/** The chart, or null when no driver was measured at two heaps. */
export function memoryChart(results: Measurement[], workload: string, workloadTitle: string): string | null {
  const rows = results.filter((m) => m.workload === workload);
  const panels: Panel[] = [];
  for (const c of [...new Set(rows.map((r) => r.concurrency))].sort((a, b) => a - b)) {
    const at = rows.filter((r) => r.concurrency === c);
    const series = [...new Set(at.map((r) => r.driver))]
      .map((d) => ({ name: d, style: styleOf(d), points: at.filter((r) => r.driver === d).map((r) => ({ x: r.heapMiB, y: r.spawnsPerSec })) }))
      .filter((s) => s.points.length > 1)
      .sort((a, b) => a.style - b.style);
    if (series.length > 0) panels.push({ title: c === 1 ? 'one at a time' : `${c} at a time`, series });
  }
  if (panels.length === 0) return null;
  return lineChart({
    title: `Spawns per second against the memory the parent holds (${workloadTitle})`,
    xLabel: 'Buffers held by the parent (MiB)',
    yLabel: 'spawns/s',
    panels,
  });
}
