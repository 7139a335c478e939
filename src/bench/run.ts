// The benchmark matrix: every driver on the same workloads, side by side in
// one run, with a small heap and with ~1 GiB of Buffers held by the parent.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { drivers as driverTable } from './drivers';
import { measure, measureReference, type Measurement } from './measure';
import { formatTables, memoryChart } from './report';
import { defaultOutDir } from './out-dir';
import { compileIfPossible } from './tools';
import { workloads, type Workload } from './workloads';

export interface BenchOptions {
  quick: boolean;
  /** Time per measurement (default 1.5 s, 0.4 s with quick). */
  seconds?: number;
  /** Where results.json, results.md and memory.svg go (default: see out-dir.ts). */
  outDir?: string;
  log: (line: string) => void;
}

interface Step {
  workloads: string[];
  drivers: string[];
  concurrency: number[];
  heapMiB: number;
}

const MAIN = ['noshell.execFile', 'noshell.execFile[loop]', 'noshell.runCheck', 'noshell.spawn', 'cp.exec', 'cp.execFile'];

function plan(quick: boolean, available: Set<string>): Step[] {
  const pick = (ids: string[]) => ids.filter((id) => available.has(id));
  if (quick) {
    return [
      { workloads: pick(['true', 'plugin']), drivers: [...MAIN, 'noshell.exec', 'cp.spawn'], concurrency: [1, 16], heapMiB: 0 },
      { workloads: ['true'], drivers: ['noshell.execFile', 'noshell.execFile[loop]', 'cp.exec', 'cp.execFile'], concurrency: [1], heapMiB: 1024 },
    ];
  }
  return [
    {
      workloads: pick(['true', 'echo', 'plugin', 'check_dummy', 'check_load', 'sh_plugin']),
      drivers: [...MAIN, 'noshell.exec', 'cp.spawn', 'cp.spawnSync'],
      concurrency: [1],
      heapMiB: 0,
    },
    {
      workloads: pick(['true', 'plugin']),
      drivers: ['noshell.execFile[posix_spawn]', 'noshell.execFile[vfork]', 'noshell.execFile[fork]'],
      concurrency: [1],
      heapMiB: 0,
    },
    { workloads: pick(['true', 'plugin', 'check_dummy']), drivers: MAIN, concurrency: [16, 64], heapMiB: 0 },
    { workloads: ['true'], drivers: ['noshell.execFile', 'cp.exec', 'cp.execFile'], concurrency: [1], heapMiB: 256 },
    {
      workloads: pick(['true', 'plugin']),
      drivers: ['noshell.execFile', 'noshell.execFile[loop]', 'noshell.runCheck', 'noshell.execFile[fork]', 'cp.exec', 'cp.execFile'],
      concurrency: [1, 16],
      heapMiB: 1024,
    },
  ];
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
  const rounds = opts.quick ? 2 : 3;
  const outDir = opts.outDir ?? defaultOutDir();
  // Now rather than after minutes of measuring: an unwritable place fails at once.
  mkdirSync(outDir, { recursive: true });
  const reference = compileIfPossible('reference');
  const all = workloads();
  const byId = new Map<string, Workload>(all.map((w) => [w.id, w]));
  const results: Measurement[] = [];
  const log = opts.log;

  log(`noshell bench${opts.quick ? ' --quick' : ''}: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? '?'}, ` +
    `Node ${process.version}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${rounds} rounds of ${seconds} s per driver`);
  for (const w of all) log(`  workload ${w.id}: ${w.title}`);
  if (reference === null) {
    log('  note: no C compiler (cc) found: the C reference loop and the C plugin workload are skipped, ' +
      'and the "% of C" column with them (install build-essential or gcc to include them)');
  }
  log(`  results will be written to ${outDir}`);

  for (const step of plan(opts.quick, new Set(byId.keys()))) {
    const held: Buffer[] = step.heapMiB > 0 ? holdMemory(step.heapMiB) : [];
    for (const conc of step.concurrency) {
      for (const id of step.workloads) {
        const w = byId.get(id)!;
        log(`\n${w.id}, concurrency ${conc}, heap ${step.heapMiB} MiB (${rounds} rounds):`);
        const drivers = [...(reference === null ? [] : ['C reference']), ...step.drivers.filter((d) => conc === 1 || driverTable[d].concurrent)];
        const samples = new Map<string, Measurement[]>(drivers.map((d) => [d, []]));
        // Rounds go through every driver in turn, so a noisy moment hits all
        // of them rather than one; each driver's median round is reported.
        for (let round = 0; round < rounds; round++) {
          for (const d of drivers) {
            const m = d === 'C reference'
              ? await measureReference(reference!, w, conc, step.heapMiB, seconds)
              : await measure(driverTable[d], w, conc, step.heapMiB, seconds);
            samples.get(d)!.push(m);
          }
        }
        for (const d of drivers) {
          const m = median(samples.get(d)!);
          results.push(m);
          log(`  ${m.driver.padEnd(30)} ${m.spawnsPerSec.toFixed(0).padStart(6)} /s  ` +
            `(rounds ${m.roundsPerSec.map((r) => r.toFixed(0)).join(', ')})` +
            (m.blockedP50Ms === null ? '' : `  blocked p50 ${m.blockedP50Ms.toFixed(3)} ms p99 ${m.blockedP99Ms!.toFixed(3)} ms`) +
            `  CPU ${(m.parentCpuMsPer1k / 1000).toFixed(3)} ms/op`);
        }
      }
    }
    // Read only here, after the step: its buffers stay reachable through every
    // measurement without relying on an unread local being kept alive.
    held.length = 0;
  }

  const meta = { date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, cpu: os.cpus()[0]?.model, quick: opts.quick, seconds, rounds };
  writeFileSync(path.join(outDir, 'results.json'), `${JSON.stringify({ meta, results }, null, 2)}\n`);
  writeFileSync(path.join(outDir, 'memory.svg'), memoryChart(results, 'true', 1));
  const tables = formatTables(results);
  writeFileSync(path.join(outDir, 'results.md'), `${tables}\n`);
  log(`\n## Results (ratios within each table were measured side by side)\n${tables}`);
  log(`\nwrote ${path.join(outDir, 'results.json')}, results.md, memory.svg`);
  return results;
}
