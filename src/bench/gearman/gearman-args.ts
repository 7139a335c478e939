// Options of `noshell bench --gearman`: the same max-worker for both workers,
// rounds alternating between them.
export interface GearmanBenchOptions {
  jobs: number;
  maxWorker: number;
  rounds: number;
  key: string;
  /** Plugin command line every job runs. */
  command: string;
}

export const gearmanBenchUsage = 'noshell bench --gearman [--jobs N] [--max-worker N] [--rounds N] [--key K]';

function positive(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new TypeError(`noshell bench --gearman: ${name} needs a positive integer, got ${value}`);
  return n;
}

export function parseGearmanBenchArgs(args: readonly string[]): GearmanBenchOptions {
  const o: GearmanBenchOptions = {
    jobs: 5000, maxWorker: 16, rounds: 3, key: 'noshell-bench-key', command: '/usr/lib/nagios/plugins/check_dummy 0 ok',
  };
  for (let i = 0; i < args.length; i++) {
    const [name, inline] = args[i].split(/=(.*)/s, 2);
    const value = () => inline ?? args[++i];
    if (name === '--gearman') continue;
    else if (name === '--jobs') o.jobs = positive(name, value());
    else if (name === '--max-worker') o.maxWorker = positive(name, value());
    else if (name === '--rounds') o.rounds = positive(name, value());
    else if (name === '--key') {
      const k = value();
      if (k === undefined || k === '') throw new TypeError('noshell bench --gearman: --key needs a value');
      o.key = k;
    } else throw new TypeError(`noshell bench --gearman: unknown argument ${args[i]}\nusage: ${gearmanBenchUsage}`);
  }
  return o;
}
