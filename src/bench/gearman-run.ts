// `noshell bench --gearman`: jobs pushed through gearmand to the C worker and
// to noshell's worker at the same max-worker, rounds alternating between them
// so a noisy moment on a shared machine hits both.
import os from 'node:os';
import type { GearmanBenchOptions } from './gearman-args';
import { findCWorker } from './gearman-peers';
import { formatGearmanTable, medianRound, type GearmanRow } from './gearman-report';
import { runGearmanRound, type GearmanRound } from './gearman-round';
import { findGearmand } from './gearman-server';
import type { WorkerKind } from './gearman-worker-process';

export async function runGearmanBench(o: GearmanBenchOptions, log: (line: string) => void): Promise<GearmanRow[]> {
  const gearmand = findGearmand();
  if (gearmand === null) throw new Error('noshell bench --gearman needs gearmand (Debian: apt install gearman-job-server)');
  const c = findCWorker();
  if (c.path === null) log(`note: ${c.why}; measuring noshell's worker only`);
  const kinds: WorkerKind[] = c.path === null ? ['noshell'] : ['C', 'noshell'];
  log(`noshell bench --gearman: ${o.jobs} jobs of \`${o.command}\` per round, max-worker ${o.maxWorker}, ${o.rounds} round(s); ` +
    `${os.cpus().length} cores, Node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const rounds = new Map<WorkerKind, GearmanRound[]>(kinds.map((k) => [k, []]));
  for (let i = 0; i < o.rounds; i++) {
    for (const k of kinds) {
      const r = await runGearmanRound(k, o, { gearmand, cWorker: c.path });
      rounds.get(k)!.push(r);
      log(`  round ${i + 1} ${k.padEnd(7)} ${r.jobsPerSec.toFixed(0).padStart(6)} jobs/s  ${r.seconds.toFixed(2)} s  ` +
        `${r.counted}/${r.jobs} results  CPU ms/job: worker ${r.cpuMsPerJob.toFixed(2)}, ` +
        `gearmand ${r.gearmandCpuMsPerJob.toFixed(2)}, submitter+reader ${r.benchCpuMsPerJob.toFixed(2)}`);
    }
  }
  const rows = kinds.map((k) => ({ median: medianRound(rounds.get(k)!), rounds: rounds.get(k)! }));
  log(`\n${formatGearmanTable(rows, c.path === null ? c.why : null)}`);
  return rows;
}
