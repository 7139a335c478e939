// `noshell bench --gearman` end to end with a small job count: both workers'
// rows, every job's result counted, nothing left running.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseGearmanBenchArgs } from '../../src/bench/gearman/gearman-args';
import { GEARMAND, peers } from '../fixtures/gearman/harness';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');

const found = GEARMAND === null ? { env: null, error: 'gearmand is not installed' } : peers();
const skip = found.env === null;
if (skip) {
  // CI sets NOSHELL_REQUIRE_PEERS: there a missing peer is a failure, not a skip.
  if (process.env.NOSHELL_REQUIRE_PEERS) throw new Error(`Mod-Gearman peers are required here: ${found.error}`);
  console.warn(`skipped: noshell bench --gearman tests: ${found.error}`);
}

function bench(args: string[], env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, [CLI, 'bench', '--gearman', ...args], { encoding: 'utf8', env, timeout: 120_000 });
}

/** Processes the benchmark started (gearmand's log dir, the workers' identifiers) that are still there. */
function leftovers(): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (/noshell-bench-gearmand-|--identifier=bench-(C|noshell)/.test(cmd)) out.push(`${pid}: ${cmd}`);
    } catch {
      // gone
    }
  }
  return out;
}

describe('bench --gearman options', () => {
  it('has the defaults of the issue and refuses what it does not know', () => {
    expect(parseGearmanBenchArgs(['--gearman'])).toMatchObject({ jobs: 5000, maxWorker: 16, rounds: 3 });
    expect(parseGearmanBenchArgs(['--gearman', '--jobs', '10', '--max-worker=4', '--rounds', '1', '--key=k1']))
      .toMatchObject({ jobs: 10, maxWorker: 4, rounds: 1, key: 'k1' });
    expect(() => parseGearmanBenchArgs(['--gearman', '--jobs', '0'])).toThrow(/--jobs needs a positive integer/);
    expect(() => parseGearmanBenchArgs(['--gearman', '--quick'])).toThrow(/unknown argument --quick/);
  });
});

describe.skipIf(skip)('noshell bench --gearman (real gearmand and C worker)', () => {
  it('measures both workers on 200 jobs and counts every result', () => {
    const r = bench(['--jobs', '200', '--rounds', '1', '--max-worker', '4'], { ...process.env, MG_WORKER: found.env!.MG_WORKER });
    expect(r.status, r.stderr + r.stdout).toBe(0);
    // Progress on stderr (a plain line per run off a terminal); each figure once, in the table on stdout.
    expect(r.stderr).toMatch(/^bench --gearman: run 1\/2 round 1 C worker: done in \d+ s/m);
    expect(r.stderr).toMatch(/^bench --gearman: run 2\/2 round 1 noshell worker: done in \d+ s$/m);
    expect(r.stdout).not.toMatch(/round 1/);
    expect(r.stdout).toMatch(/^\| C mod_gearman_worker \| 4 \| 200 \| [\d.]+ \| \d+ \| \d+ \| 1\.00× \| [\d.]+ \| [\d.]+ \| [\d.]+ \|$/m);
    expect(r.stdout).toMatch(/^\| noshell gearman-worker \| 4 \| 200 \| [\d.]+ \| \d+ \| \d+ \| [\d.]+× \| [\d.]+ \| [\d.]+ \| [\d.]+ \|$/m);
    expect(leftovers()).toEqual([]);
  });

  it('without a C worker measures noshell alone and says so in the table', () => {
    const r = bench(['--jobs', '200', '--rounds', '1'], { ...process.env, MG_WORKER: '/nonexistent/mod_gearman_worker' });
    expect(r.status, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toMatch(/^\| C mod_gearman_worker \| – .*not measured \(MG_WORKER=\/nonexistent\/mod_gearman_worker does not exist\)/m);
    expect(r.stdout).toMatch(/^\| noshell gearman-worker \| 16 \| 200 \| .* \| – \| [\d.]+ \| [\d.]+ \| [\d.]+ \|$/m);
    expect(r.stderr).not.toMatch(/round 1 C /);
    expect(r.stderr).toMatch(/^bench --gearman: run 1\/1 round 1 noshell worker: done/m);
    expect(leftovers()).toEqual([]);
  });
});
