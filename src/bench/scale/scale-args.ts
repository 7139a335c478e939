// Arguments of `noshell bench --scale`.
import path from 'node:path';
import { parseArgs } from 'node:util';

export const scaleUsage = 'noshell bench --scale [--quick | --sizes N,N,…] [--rate R] [--fill-rate R] [--seconds S] [--cli PATH]';

export interface ScaleOptions {
  sizes: number[];
  /**
   * Checks/s all N checks offer together (their one interval is N / rate);
   * null: half the machine's measured capacity, at most 300 (scale-rates.ts).
   */
  rate: number | null;
  /** Checks/s of the run that fills every check; null: half the capacity, at most 800. */
  fillRate: number | null;
  /** How long each size is scraped (every 5 s) before the reloads, ms. */
  steadyMs: number;
  /** Shares of the checks each reload edits, in order. */
  shares: number[];
  /** The noshell to measure: a package's dist/cli.js (default this one). */
  cli: string;
}

function positive(name: string, v: string, integer: boolean): number {
  const n = Number(v);
  if (!(n > 0) || (integer && !Number.isInteger(n))) {
    throw new TypeError(`noshell bench --scale: --${name} must be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(v)}`);
  }
  return n;
}

export function parseScaleArgs(argv: string[], ownCli: string): ScaleOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      scale: { type: 'boolean' }, quick: { type: 'boolean' }, sizes: { type: 'string' }, rate: { type: 'string' },
      'fill-rate': { type: 'string' }, seconds: { type: 'string' }, cli: { type: 'string' },
    },
    strict: true,
  });
  if (values.quick === true && values.sizes !== undefined) throw new TypeError('noshell bench --scale: --quick or --sizes, not both');
  const sizes = values.sizes !== undefined
    ? values.sizes.split(',').map((s) => positive('sizes', s, true))
    : values.quick === true ? [1000, 10_000] : [1000, 10_000, 100_000];
  return {
    sizes,
    rate: values.rate === undefined ? null : positive('rate', values.rate, false),
    fillRate: values['fill-rate'] === undefined ? null : positive('fill-rate', values['fill-rate'], false),
    steadyMs: 1000 * (values.seconds === undefined ? (values.quick === true ? 10 : 20) : positive('seconds', values.seconds, false)),
    shares: [0.01, 0.1],
    cli: values.cli === undefined ? ownCli : path.resolve(values.cli),
  };
}
