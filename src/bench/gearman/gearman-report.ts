// The --gearman table: the median round per worker, every round's rate, and
// the ratio to the C worker measured in the same run. CPU per job: the worker
// with its plugins, then the rest of the pipeline (gearmand; this process
// submitting and reading results), all of the median round.
import type { GearmanRound } from './gearman-round';

export interface GearmanRow {
  median: GearmanRound;
  rounds: GearmanRound[];
}

/** The round with the median rate (the lower middle one for an even count). */
export function medianRound(rounds: GearmanRound[]): GearmanRound {
  const sorted = rounds.slice().sort((a, b) => a.jobsPerSec - b.jobsPerSec);
  return sorted[(sorted.length - 1) >> 1];
}

export function formatGearmanTable(rows: GearmanRow[], missingC: string | null): string {
  const c = rows.find((r) => r.median.worker === 'C')?.median.jobsPerSec;
  const lines = [
    '| worker | max-worker | jobs | seconds | jobs/s | rounds (jobs/s) | ratio to C | CPU ms/job | gearmand CPU ms/job | submitter+reader CPU ms/job |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  if (missingC !== null) lines.push(`| C mod_gearman_worker | – | – | – | – | – | not measured (${missingC}) | – | – | – |`);
  for (const { median: m, rounds } of rows) {
    const name = m.worker === 'C' ? 'C mod_gearman_worker' : 'noshell gearman-worker';
    lines.push(`| ${name} | ${m.maxWorker} | ${m.jobs} | ${m.seconds.toFixed(2)} | ${m.jobsPerSec.toFixed(0)} | ` +
      `${rounds.map((r) => r.jobsPerSec.toFixed(0)).join(', ')} | ${c === undefined ? '–' : `${(m.jobsPerSec / c).toFixed(2)}×`} | ` +
      `${m.cpuMsPerJob.toFixed(2)} | ${m.gearmandCpuMsPerJob.toFixed(2)} | ${m.benchCpuMsPerJob.toFixed(2)} |`);
  }
  return lines.join('\n');
}
