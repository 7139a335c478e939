// `noshell bench --pipelines`: a 2- and a 3-stage pipeline, and a command
// with `>>`, run shell-free by exec() against the same string through
// /bin/sh -c (noshell's exec with shell: true, and child_process.exec): runs/s
// and CPU per run (this process's, and the children's as the kernel counts
// them when reaped), medians of alternating rounds, one at a time and 8 in
// flight, quiet and beside two CPU hogs. Then strace -f shows which programs
// each way starts: no /bin/sh in the shell-free runs.
import cp from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exec } from '../../process/exec';
import { startHogs } from '../cpu-hogs';
import { childCpuMs } from '../spawn/measure';

export interface PipelineBenchOptions {
  /** Runs per round and driver. */
  runs: number;
  rounds: number;
  /** Also beside two CPU hogs. */
  load: boolean;
  out: (line: string) => void;
  progress: (line: string) => void;
}

interface Case { id: string; title: string; command: string }
interface Driver { id: string; run: (command: string) => Promise<unknown> }

function cases(dir: string): Case[] {
  const text = '"%b" "***** Nagios *****\\nNotification Type: PROBLEM\\nHost: web1\\nState: DOWN\\n"';
  return [
    { id: '2-stage', title: 'printf | tr', command: `/usr/bin/printf ${text} | /usr/bin/tr a-z A-Z` },
    { id: '3-stage', title: 'printf | tr | wc -l', command: `/usr/bin/printf ${text} | /usr/bin/tr a-z A-Z | /usr/bin/wc -l` },
    { id: 'append', title: 'printf >> file', command: `/usr/bin/printf "%b" "1733500000\\tweb1\\tPING\\tOK\\n" >> ${path.join(dir, 'perfdata.out')}` },
  ];
}

const DRIVERS: Driver[] = [
  { id: 'noshell.exec', run: (c) => exec(c) },
  { id: 'noshell.exec[sh -c]', run: (c) => exec(c, { shell: true }) },
  {
    id: 'cp.exec',
    run: (c) => new Promise<void>((resolve, reject) => {
      cp.exec(c, (err) => (err ? reject(err) : resolve()));
    }),
  },
];

interface Figures { perSec: number; parentUs: number; childUs: number }

async function round(driver: Driver, command: string, runs: number, inFlight: number): Promise<Figures> {
  const cpu0 = process.cpuUsage();
  const kids0 = childCpuMs();
  const t0 = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < runs) {
      next++;
      await driver.run(command);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  // Give the kernel's child accounting the last reaps.
  const kids = childCpuMs() - kids0;
  return { perSec: runs / seconds, parentUs: (cpu.user + cpu.system) / runs, childUs: (kids * 1000) / runs };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The programs each way starts for one run, from strace -f; null without strace. */
function execsOf(command: string, shell: boolean): string[] | null {
  const trace = path.join(os.tmpdir(), `noshell-pipeline-strace-${process.pid}`);
  const entry = path.join(__dirname, '..', '..', 'index.js');
  const script = `require(${JSON.stringify(entry)}).exec(${JSON.stringify(command)}, { shell: ${String(shell)} }).catch((e) => { console.error(e); process.exit(1); })`;
  const r = cp.spawnSync('strace', ['-f', '-qq', '-e', 'trace=execve', '-e', 'signal=none', '-o', trace, process.execPath, '-e', script], { stdio: 'ignore' });
  if (r.error !== undefined || r.status !== 0) return null;
  const lines = fs.readFileSync(trace, 'utf8').split('\n');
  fs.rmSync(trace, { force: true });
  const programs: string[] = [];
  for (const line of lines) {
    const at = line.indexOf('execve("');
    if (at < 0 || line.includes('= -1')) continue;
    const start = at + 8;
    programs.push(line.slice(start, line.indexOf('"', start)));
  }
  // The first is node itself.
  return programs.slice(1);
}

export async function runPipelineBench(o: PipelineBenchOptions): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'noshell-pipeline-bench-'));
  const list = cases(dir);
  const out = o.out;
  out('## Pipelines, lists and redirections: shell-free against /bin/sh -c');
  out('');
  out(`${os.cpus().length} CPUs, Node ${process.version}; ${o.runs} runs per round and driver, ${o.rounds} alternating rounds, medians.`);
  out('CPU per run: this process (µs), the children as reaped (µs: for sh -c, dash and the stages it reaped).');
  try {
    for (const loaded of o.load ? [false, true] : [false]) {
      const hogs = loaded ? await startHogs() : null;
      try {
        for (const inFlight of [1, 8]) {
          out('');
          out(`### ${inFlight === 1 ? 'One at a time' : `${inFlight} in flight`}${loaded ? ', beside two CPU hogs' : ', quiet'}`);
          out('');
          out('| command | driver | runs/s | vs sh -c | parent CPU µs/run | children CPU µs/run |');
          out('|---|---|---:|---:|---:|---:|');
          for (const c of list) {
            const figures = new Map<string, Figures[]>(DRIVERS.map((d) => [d.id, []]));
            for (const d of DRIVERS) await round(d, c.command, Math.max(5, o.runs / 10), inFlight); // warm-up
            for (let r = 0; r < o.rounds; r++) {
              // Alternating order, so no driver always runs on a warmer machine.
              const order = r % 2 === 0 ? DRIVERS : [...DRIVERS].reverse();
              for (const d of order) {
                o.progress(`pipelines: ${c.id} ${d.id} round ${r + 1}/${o.rounds}${loaded ? ' (loaded)' : ''}`);
                figures.get(d.id)!.push(await round(d, c.command, o.runs, inFlight));
              }
            }
            const sh = median(figures.get('noshell.exec[sh -c]')!.map((f) => f.perSec));
            for (const d of DRIVERS) {
              const f = figures.get(d.id)!;
              const perSec = median(f.map((x) => x.perSec));
              out(`| ${c.title.replaceAll('|', '\\|')} | ${d.id} | ${perSec.toFixed(0)} | ${(perSec / sh).toFixed(2)}× | ` +
                `${median(f.map((x) => x.parentUs)).toFixed(0)} | ${median(f.map((x) => x.childUs)).toFixed(0)} |`);
            }
          }
        }
      } finally {
        hogs?.stop();
      }
    }
    out('');
    out('### What each way starts (strace -f -e execve, one run)');
    out('');
    for (const c of list.slice(0, 2)) {
      for (const shell of [false, true]) {
        const programs = execsOf(c.command, shell);
        out(`- ${c.title}, ${shell ? 'sh -c' : 'shell-free'}: ${programs === null ? 'skipped: strace not installed' : programs.join(', ')}`);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
