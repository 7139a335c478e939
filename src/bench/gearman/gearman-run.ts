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
import { Progress, type ProgressOptions } from '../progress';

/** `log`: results (stdout): the set-up line and the table; progress goes to `progress` (default stderr). */
export async function runGearmanBench(
  o: GearmanBenchOptions, log: (line: string) => void, progressStream?: ProgressOptions['stream'],
): Promise<GearmanRow[]> {
  const gearmand = findGearmand();
  if (gearmand === null) throw new Error('noshell bench --gearman needs gearmand (Debian: apt install gearman-job-server)');
  const c = findCWorker();
  const kinds: WorkerKind[] = c.path === null ? ['noshell'] : ['C', 'noshell'];
  log(`noshell bench --gearman: ${o.jobs} jobs of \`${o.command}\` per round, max-worker ${o.maxWorker}, ${o.rounds} round(s); ` +
    `${os.cpus().length} cores, Node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const rounds = new Map<WorkerKind, GearmanRound[]>(kinds.map((k) => [k, []]));
  // One group per worker per round: each round's figures go into the table, not a line of their own.
  const progress = new Progress({
    name: 'bench --gearman', groupName: 'run', groups: o.rounds * kinds.length, units: o.rounds * kinds.length,
    ...(progressStream ? { stream: progressStream } : {}),
  });
  // The table says it too (its C row: not measured, and why); this is the warning before the wait.
  if (c.path === null) progress.note(`note: ${c.why}; measuring noshell's worker only`);
  const refresh = setInterval(() => progress.refresh(), 1000).unref();
  try {
    for (let i = 0; i < o.rounds; i++) {
      for (const k of kinds) {
        progress.beginGroup(`round ${i + 1} ${k} worker`);
        progress.step(`${o.jobs} jobs`);
        const r = await runGearmanRound(k, o, { gearmand, cWorker: c.path });
        rounds.get(k)!.push(r);
        progress.unitDone();
        progress.endGroup();
      }
    }
  } finally {
    clearInterval(refresh);
    progress.end();
  }
  const rows = kinds.map((k) => ({ median: medianRound(rounds.get(k)!), rounds: rounds.get(k)! }));
  log(`\n${formatGearmanTable(rows, c.path === null ? c.why : null)}`);
  return rows;
}
