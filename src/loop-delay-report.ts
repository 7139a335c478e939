// A process's own event-loop delay, reported as it goes: with
// NOSHELL_LOOP_DELAY_REPORT=<ms> set, `noshell run` writes one line per
// window to stderr — `noshell run: loop-delay {json}` — with the window's
// p50 / p99 / max delay, the V8 heap in use and the RSS (issue 19: a long
// block of the loop is every due check that starts that late, and it can only
// be seen from inside). `noshell bench --scale` reads these lines and
// attributes each window to a scrape, a reload or neither. It preloads this
// module (node -r, see loop-delay-probe.ts) into a noshell that lacks it.
//
// perf_hooks.monitorEventLoopDelay at 1 ms: each sample is the gap between
// two ticks of its timer, so a delay is that gap less the 1 ms; a block of
// B ms shows as B less up to 1 ms. A block is counted in the window in which
// it ends (the timer fires after it).
import { monitorEventLoopDelay } from 'node:perf_hooks';

export const LOOP_DELAY_ENV = 'NOSHELL_LOOP_DELAY_REPORT';
export const LOOP_DELAY_PREFIX = 'noshell run: loop-delay ';

const RESOLUTION_MS = 1;

export interface LoopDelayWindow {
  /** When the window ended (ISO). */
  time: string;
  windowMs: number;
  /** Ticks of the 1 ms timer in the window (0: a block covered all of it). */
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  heapUsedBytes: number;
  rssBytes: number;
}

/** The window length the variable asks for, or null when it is unset or empty. */
export function loopDelayInterval(env: NodeJS.ProcessEnv = process.env): number | null {
  const v = env[LOOP_DELAY_ENV];
  if (v === undefined || v === '') return null;
  const ms = Number(v);
  if (!Number.isInteger(ms) || ms < 10 || ms > 3_600_000) {
    throw new TypeError(`${LOOP_DELAY_ENV} must be a window in whole milliseconds, 10 to 3600000, got ${JSON.stringify(v)}`);
  }
  return ms;
}

const delayMs = (ns: number) => Math.max(0, Number((ns / 1e6 - RESOLUTION_MS).toFixed(3)));

/** Starts the windows; `write` gets each line (with its newline). */
export function startLoopDelayReport(windowMs: number, write: (line: string) => void): { stop(): void } {
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  h.enable();
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const mem = process.memoryUsage();
    const w: LoopDelayWindow = {
      time: new Date().toISOString(), windowMs: Math.round(now - last), samples: h.count,
      p50Ms: h.count === 0 ? 0 : delayMs(h.percentile(50)), p99Ms: h.count === 0 ? 0 : delayMs(h.percentile(99)),
      maxMs: h.count === 0 ? 0 : delayMs(h.max), heapUsedBytes: mem.heapUsed, rssBytes: mem.rss,
    };
    last = now;
    h.reset();
    write(`${LOOP_DELAY_PREFIX}${JSON.stringify(w)}\n`);
  }, windowMs);
  // A report never keeps the process alive.
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      h.disable();
    },
  };
}

/** The window of a `noshell run: loop-delay` line, or null for any other line. */
export function parseLoopDelayLine(line: string): LoopDelayWindow | null {
  if (!line.startsWith(LOOP_DELAY_PREFIX)) return null;
  try {
    const w = JSON.parse(line.slice(LOOP_DELAY_PREFIX.length)) as LoopDelayWindow;
    return typeof w.maxMs === 'number' && typeof w.time === 'string' ? w : null;
  } catch {
    return null;
  }
}
