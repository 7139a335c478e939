// Complexity checks for parsers of untrusted text (issue 8). Wall-clock time
// on a shared 2-core machine is noisy, so a test compares two inputs of the
// same length in one process — adversarial against plain — and takes the
// best of several runs of each: noise only ever adds time. A linear parser
// stays within a small multiple; a quadratic one is off by 1000s at 1 MiB.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

/**
 * A module of the compiled package (dist/, built by the global setup), loaded
 * by Node itself. Timings use it: vitest rewrites each use of an imported
 * binding into a getter call, which slows hot loops over imported constants
 * (parse-command's character classes) 5-50x, and unevenly between inputs.
 */
export function compiled<T>(modulePath: string): T {
  return createRequire(__filename)(`../dist/${modulePath}`) as T;
}

/** Fastest of `runs` calls of fn, in ms. */
export function bestMs(fn: () => unknown, runs = 5): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

/** Text of exactly `length` UTF-16 units: `unit` repeated, cut at the end. */
export function repeatTo(unit: string, length: number): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

/**
 * Time of parse(adversarial) over time of parse(plain), both warmed up first.
 * A floor of 1 ms on the plain time keeps a very fast plain run from turning
 * timer jitter into a large ratio. The runs alternate (adversarial, plain,
 * adversarial, …): all of one input first, then all of the other, let a load
 * that came and went in between (seen: 13.5 against a bound of 12 during a
 * full suite on a busy machine, 4 alone) land on one side only. A ratio at or
 * over `limit` is measured again, up to `retries` more times, and the best is
 * kept: a load that stays for one whole measurement (seen in CI: 12.4 against
 * 12, on Node 22 beside the other suites) does not stay for three, while a
 * parser that is slower in kind is over the limit every time.
 */
export function timeRatio(
  parse: (text: string) => unknown, adversarial: string, plain: string, limit: number, runs = 5, retries = 2,
): number {
  parse(plain);
  parse(adversarial);
  let best = Infinity;
  for (let attempt = 0; attempt <= retries && best >= limit; attempt++) {
    let a = Infinity;
    let p = Infinity;
    for (let i = 0; i < runs; i++) {
      a = Math.min(a, bestMs(() => parse(adversarial), 1));
      p = Math.min(p, bestMs(() => parse(plain), 1));
    }
    best = Math.min(best, a / Math.max(p, 1));
  }
  return best;
}

/**
 * parse(adversarial) time over `plainMs` (the parser already warmed up on
 * plain input). A run over `limit` is measured again up to `retries` times,
 * each time next to a fresh run of `plain` so both see the same load, and the
 * best ratio is kept: a busy machine can stall one run, or a first run can pay
 * for compiling a new path, but neither makes every run of a linear parser slow.
 */
export function ratioTo(
  parse: (text: string) => unknown, adversarial: string, plain: string, plainMs: number, limit: number, retries = 3,
): number {
  let best = bestMs(() => parse(adversarial), 1) / plainMs;
  for (let i = 0; i < retries && best > limit; i++) {
    const p = Math.max(bestMs(() => parse(plain), 1), 1);
    best = Math.min(best, bestMs(() => parse(adversarial), 1) / p);
  }
  return best;
}

/** Calls fn, keeping only the exceptions of the listed classes from escaping as failures. */
export function onlyThrows(fn: () => unknown, ...allowed: Array<new (...args: never[]) => Error>): void {
  try {
    fn();
  } catch (err) {
    if (!allowed.some((cls) => err instanceof cls)) throw err;
  }
}
