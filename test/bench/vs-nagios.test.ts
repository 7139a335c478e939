// `noshell bench --vs-nagios` (issue 11), smoke-sized: a real Nagios 4 and a
// real CheckRunner each run 40 services of check_dummy every second; both
// must report checks they really ran, and nothing of either may be left.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { vsNagiosUnavailable } from '../../src/bench/nagios/vs-nagios';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const why = vsNagiosUnavailable() ?? (spawnSync('/usr/lib/nagios/plugins/check_dummy', ['0']).status === 0 ? null : 'check_dummy missing');
if (why !== null) {
  if (process.env.NOSHELL_REQUIRE_PEERS) throw new Error(`the Nagios comparison is required here: ${why}`);
  console.warn(`skipped: noshell bench --vs-nagios: ${why}`);
}

function nagiosProcesses(): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (spawnSync('cat', [`/proc/${p}/comm`], { encoding: 'utf8' }).stdout.trim() === 'nagios4') out.push(Number(p));
    } catch {
      // gone
    }
  }
  return out;
}

describe.skipIf(why !== null)('noshell bench --vs-nagios', () => {
  it('runs both engines on the same services and prints checks/s, latency and CPU per check for each', () => {
    const before = nagiosProcesses();
    const r = spawnSync(process.execPath, [CLI, 'bench', '--vs-nagios', '--services', '40', '--interval', '1',
      '--workers', '2', '--seconds', '4', '--rounds', '1'], { encoding: 'utf8', timeout: 90_000 });
    expect(r.status, r.stderr).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => l.startsWith('| Nagios 4') || l.startsWith('| noshell CheckRunner'));
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      const [, , rate, p50, p99, engineCpu, totalCpu] = row.split('|').map((c) => c.trim());
      // 40 services every second: close to 40 checks/s when nothing is saturated.
      expect(Number(rate), row).toBeGreaterThan(30);
      expect(Number(rate), row).toBeLessThan(45);
      expect(Number(p50)).toBeGreaterThanOrEqual(0);
      expect(Number(p99)).toBeGreaterThanOrEqual(Number(p50));
      expect(Number(engineCpu)).toBeGreaterThan(0);
      expect(Number(totalCpu)).toBeGreaterThan(Number(engineCpu));
    }
    // The runner side runs as noshell run would, and says so.
    expect(rows[1]).toContain('tick 50 ms');
    expect(r.stdout).toMatch(/noshell \/ best Nagios: \d+\.\d+× checks\/s/);
    expect(nagiosProcesses()).toEqual(before);
    expect(readdirSync(os.tmpdir()).filter((d) => d.startsWith('noshell-vs-nagios-'))).toEqual([]);
  }, 120_000);
});
