// The command line of `noshell bench` (the spawn matrix): every value checked
// here, so a typo fails at once rather than after minutes of measuring.
import path from 'node:path';
import { planAxes } from './plan';
import type { RuntimeKind } from './runtimes';

export interface BenchArgs {
  quick: boolean;
  seconds?: number;
  outDir?: string;
  rounds?: number;
  workloads?: string[];
  concurrency?: number[];
  heaps?: number[];
  /** --bun, --deno, --node PATH, in the order given (probed by the caller: runtimes.ts). */
  runtimes: Array<{ kind: RuntimeKind; path: string }>;
  loopDelay: boolean;
  /** Two CPU hogs beside the whole run. */
  load: boolean;
}

const MAX_ROUNDS = 1000;
/** Shorter, and a round may see no operation end (a C plugin takes ~1 ms; a fork with 1 GiB held ~40 ms). */
const MIN_SECONDS = 0.05;

function isDigits(s: string): boolean {
  if (s.length === 0 || s.length > 7) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** A comma-separated list, each item one of `allowed`. */
function list<T>(flag: string, value: string | undefined, parse: (item: string) => T | undefined, allowed: Set<T>): T[] {
  if (value === undefined || value.length === 0) throw new TypeError(`noshell bench: ${flag} needs a value`);
  const items = value.split(',').map((item) => {
    const v = parse(item);
    if (v === undefined || !allowed.has(v)) {
      throw new TypeError(`noshell bench: ${flag}: ${JSON.stringify(item.slice(0, 40))} is not one of ${[...allowed].join(', ')}`);
    }
    return v;
  });
  return [...new Set(items)];
}

export function parseBenchArgs(rest: readonly string[], usage: string): BenchArgs {
  const axes = planAxes(false);
  const a: BenchArgs = { quick: false, runtimes: [], loopDelay: true, load: false };
  const bad = (arg: string) => new TypeError(`noshell bench: unknown argument ${JSON.stringify(arg)}\nusage: ${usage}`);
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const value = rest[i + 1];
    switch (arg) {
      case '--quick': a.quick = true; break;
      case '--no-loop-delay': a.loopDelay = false; break;
      case '--load': a.load = true; break;
      case '--out':
        if (value === undefined || value.length === 0 || value.startsWith('--')) throw new TypeError('noshell bench: --out needs a directory');
        a.outDir = path.resolve(rest[++i]);
        break;
      case '--seconds':
        if (!(Number(value) >= MIN_SECONDS && Number(value) <= 3600)) {
          throw new TypeError(`noshell bench: --seconds needs a number of seconds from ${MIN_SECONDS} to 3600`);
        }
        a.seconds = Number(rest[++i]);
        break;
      case '--rounds':
        if (value === undefined || !isDigits(value) || Number(value) < 1 || Number(value) > MAX_ROUNDS) {
          throw new TypeError(`noshell bench: --rounds needs a whole number from 1 to ${MAX_ROUNDS}`);
        }
        a.rounds = Number(rest[++i]);
        break;
      case '--workloads':
        a.workloads = list(arg, value, (s) => s, axes.workloads);
        i++;
        break;
      case '--concurrency':
        a.concurrency = list(arg, value, (s) => (isDigits(s) ? Number(s) : undefined), axes.concurrency);
        i++;
        break;
      case '--heaps':
        a.heaps = list(arg, value, (s) => (s === 'small' ? 0 : isDigits(s) ? Number(s) : undefined), axes.heaps);
        i++;
        break;
      case '--bun':
      case '--deno':
      case '--node':
        if (value === undefined || value.length === 0 || value.startsWith('--')) {
          throw new TypeError(`noshell bench: ${arg} needs the path of a ${arg.slice(2)} binary`);
        }
        a.runtimes.push({ kind: arg.slice(2) as RuntimeKind, path: rest[++i] });
        break;
      default:
        throw bad(arg);
    }
  }
  return a;
}
