// Arguments of `noshell bench --vs-nagios`.
import { parseArgs } from 'node:util';
import type { VsNagiosOptions } from './vs-nagios';

export const vsNagiosUsage =
  'noshell bench --vs-nagios [--services N] [--interval S] [--workers 4,16] [--concurrency N] [--seconds S] [--rounds R] [--plugin PATH]';

function positive(name: string, v: string | undefined, fallback: number, integer = true): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!(n > 0) || (integer && !Number.isInteger(n))) throw new TypeError(`noshell bench --vs-nagios: --${name} must be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(v)}`);
  return n;
}

export function parseVsNagiosArgs(argv: string[], log: (line: string) => void): VsNagiosOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      'vs-nagios': { type: 'boolean' }, services: { type: 'string' }, interval: { type: 'string' },
      workers: { type: 'string' }, concurrency: { type: 'string' }, seconds: { type: 'string' }, rounds: { type: 'string' },
      plugin: { type: 'string' },
    },
    strict: true,
  });
  const workers = (values.workers ?? '16').split(',').map((w) => positive('workers', w, 16));
  return {
    services: positive('services', values.services, 3000),
    intervalSeconds: positive('interval', values.interval, 1, false),
    checkWorkers: workers,
    concurrency: positive('concurrency', values.concurrency, 64),
    seconds: positive('seconds', values.seconds, 15, false),
    warmupSeconds: 5,
    rounds: positive('rounds', values.rounds, 2),
    command: [values.plugin ?? '/usr/lib/nagios/plugins/check_dummy', '0', 'ok'],
    log,
  };
}
