// What `noshell bench` measures: tables of drivers on one workload at one
// concurrency with one parent heap. Every row of a table is measured in the
// same rounds, so its ratios compare like with like; no two tables share a
// (workload, concurrency, heap), so the C reference appears once per table.
// (The spawn methods used to be a step of their own on `true` and `plugin` at
// concurrency 1: a second table of the same key with its own C reference,
// printed as one table with two "C reference" rows and ratios across them.)

export interface TablePlan {
  workload: string;
  concurrency: number;
  heapMiB: number;
  /** Rows in order; 'C reference' (glibc posix_spawn) and 'C reference[vfork]' first when there are. */
  drivers: string[];
}

/** Tables that share a held heap: it is allocated once for them. */
export interface StepPlan {
  heapMiB: number;
  tables: TablePlan[];
}

export const REFERENCE = 'C reference';
/** The same C loop spawning with a plain vfork() + execve: the cheapest spawn C has. */
export const REFERENCE_VFORK = 'C reference[vfork]';

const MAIN = ['noshell.execFile', 'noshell.execFile[loop]', 'noshell.runCheck', 'noshell.spawn', 'cp.exec', 'cp.execFile'];
const METHODS = ['noshell.execFile[posix_spawn]', 'noshell.execFile[vfork]', 'noshell.execFile[fork]'];

interface StepSpec {
  heapMiB: number;
  concurrency: number[];
  workloads: string[];
  drivers: (workload: string) => string[];
}

function specs(quick: boolean): StepSpec[] {
  if (quick) {
    return [
      { heapMiB: 0, concurrency: [1, 16], workloads: ['true', 'plugin'], drivers: () => [...MAIN, 'noshell.exec', 'cp.spawn'] },
      { heapMiB: 1024, concurrency: [1], workloads: ['true'], drivers: () => ['noshell.execFile', 'noshell.execFile[loop]', 'cp.exec', 'cp.execFile'] },
    ];
  }
  const sequential = [...MAIN, 'noshell.exec', 'cp.spawn', 'cp.spawnSync'];
  return [
    {
      heapMiB: 0, concurrency: [1], workloads: ['true', 'echo', 'plugin', 'check_dummy', 'check_load', 'sh_plugin'],
      // Each method on the two cheapest workloads, in the same rounds as the rest.
      drivers: (w) => (w === 'true' || w === 'plugin' ? [...sequential, ...METHODS] : sequential),
    },
    { heapMiB: 0, concurrency: [16, 64], workloads: ['true', 'plugin', 'check_dummy'], drivers: () => MAIN },
    { heapMiB: 256, concurrency: [1], workloads: ['true'], drivers: () => ['noshell.execFile', 'cp.exec', 'cp.execFile'] },
    {
      heapMiB: 1024, concurrency: [1, 16], workloads: ['true', 'plugin'],
      drivers: () => ['noshell.execFile', 'noshell.execFile[loop]', 'noshell.runCheck', 'noshell.execFile[fork]', 'cp.exec', 'cp.execFile'],
    },
  ];
}

/** What a run leaves out or adds: only these concurrencies and heaps (all when absent); rows for every table. */
export interface PlanOptions {
  concurrency?: ReadonlySet<number>;
  heaps?: ReadonlySet<number>;
  /** Rows added to every table, after the in-process drivers (other runtimes: runtimes.ts). */
  extra?: readonly string[];
}

/**
 * The run's tables. `workloads`: those available here (no plugin without a C
 * compiler) and asked for; `concurrent(d)`: whether driver d can run concurrently.
 */
export function plan(
  quick: boolean, workloads: ReadonlySet<string>, withReference: boolean, concurrent: (d: string) => boolean, opts: PlanOptions = {},
): StepPlan[] {
  // Merged per heap, so two specs with one heap still allocate it once.
  const steps: StepPlan[] = [];
  for (const s of specs(quick)) {
    if (opts.heaps !== undefined && !opts.heaps.has(s.heapMiB)) continue;
    let step = steps.find((x) => x.heapMiB === s.heapMiB);
    if (step === undefined) steps.push((step = { heapMiB: s.heapMiB, tables: [] }));
    for (const concurrency of s.concurrency) {
      if (opts.concurrency !== undefined && !opts.concurrency.has(concurrency)) continue;
      for (const workload of s.workloads.filter((w) => workloads.has(w))) {
        const drivers = s.drivers(workload).filter((d) => concurrency === 1 || concurrent(d));
        step.tables.push({
          workload, concurrency, heapMiB: s.heapMiB,
          drivers: [...(withReference ? [REFERENCE, REFERENCE_VFORK] : []), ...drivers, ...(opts.extra ?? [])],
        });
      }
    }
  }
  return steps.filter((s) => s.tables.length > 0);
}

/** The workloads, concurrencies and heaps some table of the full (or quick) matrix has: what the filters may name. */
export function planAxes(quick: boolean): { workloads: Set<string>; concurrency: Set<number>; heaps: Set<number> } {
  const all = specs(quick);
  return {
    workloads: new Set(all.flatMap((s) => s.workloads)),
    concurrency: new Set(all.flatMap((s) => s.concurrency)),
    heaps: new Set(all.map((s) => s.heapMiB)),
  };
}

export function tableKey(t: { workload: string; concurrency: number; heapMiB: number }): string {
  return `${t.workload} | concurrency ${t.concurrency} | heap ${t.heapMiB === 0 ? 'small' : `${t.heapMiB} MiB`}`;
}
