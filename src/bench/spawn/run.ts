// The benchmark matrix: every driver on the same workloads, side by side in
// one run, with a small heap and with up to 1 GiB of Buffers held by the
// parent. Results go to `out` (stdout) once each, as each table is done;
// progress goes to stderr (progress.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { drivers as driverTable } from './drivers';
import { measure, measureReference, type Measurement } from './measure';
import { memoryChart } from './memory-chart';
import { defaultOutDir } from '../out-dir';
import { plan, REFERENCE, REFERENCE_VFORK, tableKey } from './plan';
import { labelRuntimes, measureRuntime, runtimeDrivers, type Runtime, type RuntimeDriver } from './runtimes';
import { startHogs } from '../cpu-hogs';
import { formatDuration, Progress } from '../progress';
import { formatHeader, formatTable, type RunMeta } from './report';
import { compileIfPossible } from './tools';
import { workloads, type Workload } from './workloads';

export interface BenchOptions {
  quick: boolean;
  /** Time per measurement (default 0.6 s, 0.25 s with quick). */
  seconds?: number;
  /** Where results.json, results.md and memory.svg go (default: see out-dir.ts). */
  outDir?: string;
  /** Rounds per table (default 3, 2 with quick). */
  rounds?: number;
  /** Only these workloads, concurrencies and held heaps (MiB, 0: small) of the matrix. */
  workloads?: readonly string[];
  concurrency?: readonly number[];
  heaps?: readonly number[];
  /** Other runtimes: their rows join every table (runtimes.ts). */
  runtimes?: readonly Runtime[];
  /** Whether a 1 ms timer measures the loop delay (default true; it costs each row CPU of its own). */
  loopDelay?: boolean;
  /** Two CPU hogs run through the whole matrix. */
  load?: boolean;
  /** Results: the header and each table (stdout). */
  out: (text: string) => void;
  /** Progress and notes (stderr; default process.stderr). */
  progress?: NodeJS.WriteStream | { write(s: string): unknown; isTTY?: boolean; columns?: number };
}

/** The round with the median rate, carrying every round's rate. */
function median(rounds: Measurement[]): Measurement {
  const sorted = rounds.slice().sort((a, b) => a.spawnsPerSec - b.spawnsPerSec);
  return { ...sorted[(sorted.length - 1) >> 1], roundsPerSec: rounds.map((r) => r.spawnsPerSec) };
}

/** Holds `mib` MiB of touched Buffers (external memory: fork copies its page tables). */
function holdMemory(mib: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let i = 0; i < mib / 16; i++) chunks.push(Buffer.alloc(16 << 20, 1));
  return chunks;
}

export async function runBench(opts: BenchOptions): Promise<Measurement[]> {
  const seconds = opts.seconds ?? (opts.quick ? 0.25 : 0.6);
  const rounds = opts.rounds ?? (opts.quick ? 2 : 3);
  const loopDelay = opts.loopDelay ?? true;
  const outDir = opts.outDir ?? defaultOutDir();
  // Now rather than after minutes of measuring: an unwritable place fails at once.
  mkdirSync(outDir, { recursive: true });
  const reference = compileIfPossible('reference');
  const all = workloads();
  const byId = new Map<string, Workload>(all.map((w) => [w.id, w]));
  const runtimes = labelRuntimes(opts.runtimes ?? []);
  const external = new Map<string, RuntimeDriver>(runtimes.flatMap(runtimeDrivers).map((d) => [d.id, d]));
  const wanted = opts.workloads === undefined ? [...byId.keys()] : opts.workloads.filter((w) => byId.has(w));
  // Asked for but not here (no C compiler for the plugin, no monitoring-plugins).
  const missing = (opts.workloads ?? []).filter((w) => !byId.has(w));
  const steps = plan(opts.quick, new Set(wanted), reference !== null, (d) => external.has(d) || driverTable[d].concurrent, {
    extra: [...external.keys()],
    ...(opts.concurrency ? { concurrency: new Set(opts.concurrency) } : {}),
    ...(opts.heaps ? { heaps: new Set(opts.heaps) } : {}),
  });
  const tables = steps.flatMap((s) => s.tables);
  if (tables.length === 0) {
    throw new TypeError(`noshell bench: no table of the ${opts.quick ? 'quick ' : ''}matrix has that workload, concurrency and heap here` +
      (missing.length > 0 ? ` (not available here: ${missing.join(', ')})` : ''));
  }
  const progress = new Progress({
    name: 'bench', groupName: 'table', groups: tables.length,
    units: tables.reduce((n, t) => n + t.drivers.length * rounds, 0), ...(opts.progress ? { stream: opts.progress } : {}),
  });
  const meta: RunMeta = {
    date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, cpu: os.cpus()[0]?.model,
    memGiB: Math.round(os.totalmem() / 2 ** 30), quick: opts.quick, seconds, rounds, loopDelay, load: opts.load === true,
    runtimes: runtimes.map((r) => `${r.kind} ${r.version} (${r.path})`),
  };
  const notes = reference !== null ? [] : ['no C compiler (cc) found: the C reference loop and the C plugin workload are skipped, ' +
    'and the "% of C" column with them (install build-essential or gcc to include them)'];
  if (missing.length > 0) notes.push(`not available here, left out: ${missing.join(', ')}`);
  const used = new Set(tables.map((t) => t.workload));
  const md: string[] = [formatHeader(meta, all.filter((w) => used.has(w.id)), notes)];
  opts.out(`${md[0]}\n`);
  progress.note(`${tables.length} tables, ${rounds} rounds of ${seconds} s per driver; results will be written to ${outDir}`);

  const results: Measurement[] = [];
  const started = performance.now();
  const hogs = opts.load === true ? await startHogs() : null;
  try {
    for (const step of steps) {
      const held: Buffer[] = step.heapMiB > 0 ? holdMemory(step.heapMiB) : [];
      for (const table of step.tables) {
        const w = byId.get(table.workload)!;
        progress.beginGroup(tableKey(table));
        const samples = new Map<string, Measurement[]>(table.drivers.map((d) => [d, []]));
        // Rounds go through every driver in turn, so a noisy moment hits all
        // of them rather than one, in the reverse order every other round, so
        // that no driver always follows the same one; each driver's median
        // round is reported.
        for (let round = 0; round < rounds; round++) {
          for (const d of round % 2 === 0 ? table.drivers : [...table.drivers].reverse()) {
            progress.step(`round ${round + 1}/${rounds} ${d}`);
            const other = external.get(d);
            const m = d === REFERENCE || d === REFERENCE_VFORK
              ? await measureReference(reference!, w, table.concurrency, step.heapMiB, seconds, d === REFERENCE_VFORK ? 'vfork' : 'posix_spawn')
              : other !== undefined
                ? await measureRuntime(other, w, table.concurrency, step.heapMiB, seconds, loopDelay)
                : await measure(driverTable[d], w, table.concurrency, step.heapMiB, seconds, loopDelay);
            samples.get(d)!.push(m);
            progress.unitDone();
          }
        }
        const rows = table.drivers.map((d) => median(samples.get(d)!));
        results.push(...rows);
        const text = formatTable(rows);
        md.push(text);
        progress.endGroup();
        progress.around(() => opts.out(`\n${text}\n`));
      }
      // Read only here, after the step: its buffers stay reachable through every
      // measurement without relying on an unread local being kept alive.
      held.length = 0;
    }
  } finally {
    hogs?.stop();
    // A driver that throws still leaves the terminal's line clean for the error.
    progress.end();
  }

  const files = [path.join(outDir, 'results.json'), path.join(outDir, 'results.md')];
  writeFileSync(files[0], `${JSON.stringify({ meta, results }, null, 2)}\n`);
  writeFileSync(files[1], `${md.join('\n\n')}\n`);
  const chart = memoryChart(results, 'true', byId.get('true')!.title);
  if (chart !== null) {
    files.push(path.join(outDir, 'memory.svg'));
    writeFileSync(files[2], chart);
  }
  progress.note(`done in ${formatDuration(performance.now() - started)}; wrote ${files.join(', ')}`);
  return results;
}
