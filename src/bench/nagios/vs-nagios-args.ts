// Arguments of `noshell bench --vs-nagios`.
import { parseArgs } from 'node:util';
import type { VsNagiosOptions } from './vs-nagios';
import { quoteText } from '../../util/quote-text';
import { TICK_TEXT, tickFromText } from '../../check/model/definition';
import { DEFAULT_RUN_TICK_MS } from '../../config/checks-file-shape';

export const vsNagiosUsage =
  'noshell bench --vs-nagios [--services N] [--interval S] [--workers 4,16] [--concurrency N] [--tick D] [--seconds S] [--rounds R] [--plugin PATH]';

function positive(name: string, v: string | undefined, fallback: number, integer = true): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!(n > 0) || (integer && !Number.isInteger(n))) throw new TypeError(`noshell bench --vs-nagios: --${name} must be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(v)}`);
  return n;
}

/** --tick as `noshell run` takes it (0, or with a unit); its default is noshell run's. */
function tickOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_RUN_TICK_MS;
  try {
    return tickFromText(text);
  } catch {
    throw new TypeError(`noshell bench --vs-nagios: --tick must be ${TICK_TEXT}, got ${quoteText(text)}`);
  }
}

export function parseVsNagiosArgs(argv: string[], log: (line: string) => void): VsNagiosOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      'vs-nagios': { type: 'boolean' }, services: { type: 'string' }, interval: { type: 'string' },
      workers: { type: 'string' }, concurrency: { type: 'string' }, tick: { type: 'string' }, seconds: { type: 'string' }, rounds: { type: 'string' },
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
    tick: tickOf(values.tick),
    seconds: positive('seconds', values.seconds, 15, false),
    warmupSeconds: 5,
    rounds: positive('rounds', values.rounds, 2),
    command: [values.plugin ?? '/usr/lib/nagios/plugins/check_dummy', '0', 'ok'],
    log,
  };
}
