// The commands that need the addon (everything but --version and build-addon,
// which src/cli.ts answers before loading it).
import path from 'node:path';
import { UsageError } from './cli-options';
import { usageOf } from './help';
import { runBench } from '../bench/spawn/run';
import { parseBenchArgs } from '../bench/spawn/bench-args';
import { probeRuntime } from '../bench/spawn/runtimes';
import { definedFields } from '../util/defined-fields';
import { parseGearmanBenchArgs } from '../bench/gearman/gearman-args';
import { runGearmanBench } from '../bench/gearman/gearman-run';
import { parseVsNagiosArgs } from '../bench/nagios/vs-nagios-args';
import { runVsNagios } from '../bench/nagios/vs-nagios';
import { parseScaleArgs } from '../bench/scale/scale-args';
import { runScaleBench } from '../bench/scale/scale';
import { runPipelineBench, type PipelineBenchOptions } from '../bench/pipeline/pipeline-bench';
import { checkCommand } from './check-command';
import { runCommand } from './run-command';
import { gearmanSubmitCommand } from './gearman-submit-command';
import { gearmanWorkerCommand } from './gearman-worker-command';

const out = (s: string) => process.stdout.write(s);
const err = (s: string) => process.stderr.write(s);

/** --pipelines [--runs N] [--rounds R] [--load]. */
function parsePipelineBenchArgs(rest: string[], write: (s: string) => void, note: (s: string) => void): PipelineBenchOptions {
  const o: PipelineBenchOptions = {
    runs: 300, rounds: 3, load: false, out: (line) => write(`${line}\n`), progress: (line) => note(`${line}\n`),
  };
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === '--pipelines') continue;
    if (a === '--load') o.load = true;
    else if ((a === '--runs' || a === '--rounds') && /^[1-9][0-9]{0,6}$/.test(rest[i + 1] ?? '')) {
      o[a === '--runs' ? 'runs' : 'rounds'] = Number(rest[++i]);
    } else throw new TypeError(`noshell bench: unknown argument ${JSON.stringify(a)}\nusage: ${usageOf('bench')}`);
  }
  return o;
}

async function bench(rest: string[]): Promise<number> {
  if (rest.includes('--vs-nagios')) {
    await runVsNagios(parseVsNagiosArgs(rest, (line) => out(`${line}\n`)));
    return 0;
  }
  if (rest.includes('--scale')) {
    // The noshell measured by default is this one: dist/cli.js beside dist/cli/.
    await runScaleBench(parseScaleArgs(rest, path.join(__dirname, '..', 'cli.js')), (line) => out(`${line}\n`));
    return 0;
  }
  if (rest.includes('--pipelines')) {
    await runPipelineBench(parsePipelineBenchArgs(rest, out, err));
    return 0;
  }
  if (rest.includes('--gearman')) {
    await runGearmanBench(parseGearmanBenchArgs(rest), (line) => out(`${line}\n`));
    return 0;
  }
  const a = parseBenchArgs(rest, usageOf('bench'));
  // Before anything is measured: a binary that cannot run the loop fails here.
  const runtimes = a.runtimes.map((r) => probeRuntime(r.kind, r.path));
  await runBench({
    quick: a.quick, loopDelay: a.loopDelay, load: a.load, runtimes, out,
    ...definedFields({ seconds: a.seconds, outDir: a.outDir, rounds: a.rounds, workloads: a.workloads, concurrency: a.concurrency, heaps: a.heaps }),
  });
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    if (cmd === 'bench') return await bench(rest);
    if (cmd === 'check') return await checkCommand(rest, out, err);
    if (cmd === 'run') return await runCommand(rest, out, err);
    if (cmd === 'gearman-worker') return await gearmanWorkerCommand(rest, out, err);
    if (cmd === 'gearman-submit') return await gearmanSubmitCommand(rest, out);
  } catch (e) {
    // Like a plugin with bad arguments or an internal error: UNKNOWN.
    if (cmd === 'check') {
      const first = e instanceof Error ? e.message.split('\n')[0] : String(e);
      out(`UNKNOWN - ${first.startsWith('noshell check: ') ? first : `noshell check: ${first}`}\n`);
      // Said once: the reason is on stdout, as a plugin says it; stderr gets the usage.
      if (e instanceof UsageError) err(`usage: ${e.usage}\n`);
      else if (e instanceof TypeError) err(`${e.message}\n`);
      return 3;
    }
    if (e instanceof TypeError || e instanceof RangeError) {
      err(`${e.message}\n`);
      return 2;
    }
    throw e;
  }
  // src/cli.ts answers unknown commands before it loads this module.
  throw new Error(`noshell: no command ${JSON.stringify(cmd)}`);
}
