// What `noshell bench` measures (src/bench/spawn/plan.ts) and how a table reads
// (src/bench/spawn/report.ts). The spawn methods were once a step of their own with
// the same (workload, concurrency, heap) as the main table: printed as one
// table with two "C reference" rows and ratios taken across two runs.
import { describe, expect, it } from 'vitest';
import type { Measurement } from '../../src/bench/spawn/measure';
import { plan, REFERENCE, REFERENCE_VFORK, tableKey } from '../../src/bench/spawn/plan';
import { fmtMs, formatTable } from '../../src/bench/spawn/report';

const ALL = new Set(['true', 'echo', 'plugin', 'check_dummy', 'check_load', 'sh_plugin']);
const concurrent = (d: string) => d !== 'cp.spawnSync';

describe('bench plan', () => {
  for (const quick of [false, true]) {
    it(`${quick ? '--quick' : 'full'}: every table has its own key and exactly one C reference, first`, () => {
      const tables = plan(quick, ALL, true, concurrent).flatMap((s) => s.tables);
      const keys = tables.map(tableKey);
      expect(new Set(keys).size).toBe(keys.length);
      for (const t of tables) {
        expect(t.drivers.filter((d) => d === REFERENCE), tableKey(t)).toHaveLength(1);
        expect(t.drivers[0]).toBe(REFERENCE);
        // The same C loop on a plain vfork, beside it in every table.
        expect(t.drivers[1]).toBe(REFERENCE_VFORK);
        expect(new Set(t.drivers).size).toBe(t.drivers.length);
        if (t.concurrency > 1) expect(t.drivers).not.toContain('cp.spawnSync');
      }
    });
  }

  it('measures each spawn method in the main sequential table of true and plugin', () => {
    const tables = plan(false, ALL, true, concurrent).flatMap((s) => s.tables);
    for (const w of ['true', 'plugin']) {
      const t = tables.find((x) => x.workload === w && x.concurrency === 1 && x.heapMiB === 0)!;
      expect(t.drivers).toEqual(expect.arrayContaining(['noshell.execFile[posix_spawn]', 'noshell.execFile[vfork]', 'noshell.execFile[fork]', 'cp.exec']));
    }
  });

  it('allocates each heap once, and leaves out what is missing here', () => {
    const steps = plan(false, new Set(['true', 'echo']), false, concurrent);
    expect(steps.map((s) => s.heapMiB)).toEqual([0, 256, 1024]);
    const tables = steps.flatMap((s) => s.tables);
    expect(tables.every((t) => !t.drivers.includes(REFERENCE) && !t.drivers.includes(REFERENCE_VFORK))).toBe(true);
    expect(new Set(tables.map((t) => t.workload))).toEqual(new Set(['true', 'echo']));
  });
});

function row(driver: string, spawnsPerSec: number, blocked: number | null): Measurement {
  return {
    driver, workload: 'true', concurrency: 16, heapMiB: 1024, spawns: 10, seconds: 1, spawnsPerSec, parentCpuMsPer1k: 1, childCpuMsPer1k: 1,
    blockedP50Ms: blocked, blockedP99Ms: blocked, blockedMaxMs: blocked,
    loopDelayP50Ms: blocked === null ? null : 0.01, loopDelayP99Ms: blocked === null ? null : 600, loopDelayMaxMs: blocked === null ? null : 612.4,
    roundsPerSec: [spawnsPerSec, spawnsPerSec * 2],
  };
}

describe('bench table', () => {
  it('names the statistics in the header and gives blocked time and loop delay the same p50 / p99 / max in ms', () => {
    const text = formatTable([row(REFERENCE, 1500, null), row('cp.exec', 25, 38.6)]);
    const lines = text.split('\n');
    expect(lines[0]).toBe('### true | concurrency 16 | heap 1024 MiB');
    expect(lines[2]).toContain('| blocked in call p50 / p99 / max ms | loop delay p50 / p99 / max ms |');
    expect(lines[5]).toBe('| cp.exec | 25 | 25–50 | 1.00 | 2% | 1 | 1 | 38.6 / 38.6 / 38.6 | 0.010 / 600 / 612 |');
    expect(lines[4]).toMatch(/^\| C reference \| 1500 \| .* \| - \| - \|$/);
  });

  it('formats ms with about three significant digits', () => {
    expect([0.0312, 2.549, 46.12, 612.4, null].map(fmtMs)).toEqual(['0.031', '2.55', '46.1', '612', '-']);
  });
});
