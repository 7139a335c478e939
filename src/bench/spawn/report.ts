// The tables of `noshell bench`, with ratios against child_process.exec and
// the C reference measured in the same rounds, and the header that says what
// the run was and what each column means. stdout and results.md hold the same
// text: the header, then each table once, as it is measured.
import type { Measurement } from './measure';
import { REFERENCE, tableKey } from './plan';

const BASE = 'cp.exec';

export interface RunMeta {
  date: string;
  node: string;
  cpus: number;
  cpu: string | undefined;
  memGiB: number;
  quick: boolean;
  seconds: number;
  rounds: number;
  /** Whether the 1 ms loop-delay timer ran beside every row. */
  loopDelay: boolean;
  /** Whether two CPU hogs ran beside every measurement (--load). */
  load: boolean;
  /** Other runtimes measured: "bun 1.4.5 (/path)". */
  runtimes: string[];
}

function fmt(n: number | null, digits = 0): string {
  return n === null || !Number.isFinite(n) ? '-' : n.toFixed(digits);
}

/** Milliseconds with about three significant digits: 0.031, 2.55, 46.1, 612. */
export function fmtMs(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return '-';
  return n.toFixed(n < 1 ? 3 : n < 10 ? 2 : n < 100 ? 1 : 0);
}

function triple(a: number | null, b: number | null, c: number | null): string {
  return a === null ? '-' : `${fmtMs(a)} / ${fmtMs(b)} / ${fmtMs(c)}`;
}

export function formatHeader(meta: RunMeta, workloads: Array<{ id: string; title: string }>, notes: string[]): string {
  return [
    `# noshell bench${meta.quick ? ' --quick' : ''}`,
    '',
    `${meta.cpus} cores (${meta.cpu ?? '?'}), ${meta.memGiB} GiB, Node ${meta.node}; ${meta.date}. ` +
      `Each driver ran ${meta.rounds} rounds of ${meta.seconds} s, the rounds of a table interleaved (every other round in reverse order); each row is its median round.`,
    '',
    ...workloads.map((w) => `- workload \`${w.id}\`: ${w.title}`),
    ...meta.runtimes.map((r) => `- runtime: ${r}, its own process per round (bench/runtime-loop.mjs)`),
    ...(meta.loopDelay ? [] : ['- note: no loop-delay timer (--no-loop-delay): the loop delay columns are empty']),
    ...(meta.load ? ['- note: two CPU hogs ran beside every measurement (--load)'] : []),
    ...notes.map((n) => `- note: ${n}`),
    '',
    'Columns: **spawns/s** completed operations per second; **rounds** the lowest and highest round; ' +
      '**× cp.exec**, **% of C** ratios to rows of the same table (% of C: to `C reference`, the C loop on glibc\'s posix_spawn; ' +
      '`C reference[vfork]` is the same loop on a plain vfork + execve, the cheapest spawn C has); **CPU ms/1k** user+system CPU per 1,000 operations ' +
      '(parent: the process that spawns, all threads: this Node process, the C loop, or the runtime\'s own process; child: the reaped children); ' +
      '**blocked in call** time inside the synchronous call, per call; ' +
      '**loop delay** how late a 1 ms timer fired, per tick, over the same window. ' +
      'Both give p50 / p99 / max in ms. A loop delay above the blocked time is other work on the loop thread, ' +
      'or calls that ran back to back in one turn of the loop (concurrency > 1).',
  ].join('\n');
}

/** One table: rows measured side by side, in the order given. */
export function formatTable(rows: Measurement[]): string {
  const ref = rows.find((r) => r.driver === REFERENCE)?.spawnsPerSec ?? NaN;
  const base = rows.find((r) => r.driver === BASE)?.spawnsPerSec ?? NaN;
  // Without a C compiler there is no reference row, so no "% of C" column.
  const hasRef = !Number.isNaN(ref);
  const hasBase = !Number.isNaN(base);
  const cols: Array<[string, string, (r: Measurement) => string]> = [
    ['driver', '---', (r) => r.driver],
    ['spawns/s', '--:', (r) => fmt(r.spawnsPerSec)],
    ['rounds', '--:', (r) => (r.roundsPerSec.length > 1 ? `${fmt(Math.min(...r.roundsPerSec))}–${fmt(Math.max(...r.roundsPerSec))}` : '-')],
    ...(hasBase ? [['× cp.exec', '--:', (r: Measurement) => fmt(r.spawnsPerSec / base, 2)] as [string, string, (r: Measurement) => string]] : []),
    ...(hasRef ? [['% of C', '--:', (r: Measurement) => `${fmt((100 * r.spawnsPerSec) / ref)}%`] as [string, string, (r: Measurement) => string]] : []),
    ['parent CPU ms/1k', '--:', (r) => fmt(r.parentCpuMsPer1k)],
    ['child CPU ms/1k', '--:', (r) => fmt(r.childCpuMsPer1k)],
    ['blocked in call p50 / p99 / max ms', '--:', (r) => triple(r.blockedP50Ms, r.blockedP99Ms, r.blockedMaxMs)],
    ['loop delay p50 / p99 / max ms', '--:', (r) => triple(r.loopDelayP50Ms, r.loopDelayP99Ms, r.loopDelayMaxMs)],
  ];
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    `### ${tableKey(rows[0])}`,
    '',
    line(cols.map((c) => c[0])),
    `|${cols.map((c) => c[1]).join('|')}|`,
    ...rows.map((r) => line(cols.map((c) => c[2](r)))),
  ].join('\n');
}
