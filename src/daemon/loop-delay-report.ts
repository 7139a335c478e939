// A process's own event-loop delay, reported as it goes: with
// NOSHELL_LOOP_DELAY_REPORT=<ms> set, `noshell run` writes one line per
// window to stderr — `noshell run: loop-delay {json}` — with the window's
// p50 / p99 / max delay, the V8 heap in use and the RSS (issue 19: a long
// block of the loop is every due check that starts that late, and it can only
// be seen from inside). `noshell bench --scale` reads these lines and
// attributes each window to a scrape, a reload or neither. It preloads this
// module (node -r, see loop-delay-probe.ts) into a noshell that lacks it.
//
// A 1 ms interval timer whose lateness is the delay: a block of B ms shows as
// B less at most 1 ms, in the window in which it ends (the tick after it).
// Not perf_hooks.monitorEventLoopDelay: its reset() also restarts its clock,
// so a block that began before its first tick in a window was not counted at
// all (a 1 s reload at 10,000 checks showed as 3 ms), as src/bench/spawn/loop-delay.ts found.
//
// A tick can be late because the loop was busy, or because its thread was
// runnable while the CPUs ran others (the checks it started, on a small
// machine). Where the kernel keeps scheduler figures, each tick also reads
// the thread's time waiting for a CPU (/proc/thread-self/schedstat, one
// pread), and the window reports the longest tick delay less its wait too:
// the loop's longest block of its own. Time the thread sleeps rather than
// waits (a lock, joining V8's collection helpers while they wait for a CPU)
// counts as its own.
import { closeSync, openSync, readSync } from 'node:fs';

export const LOOP_DELAY_ENV = 'NOSHELL_LOOP_DELAY_REPORT';
export const LOOP_DELAY_PREFIX = 'noshell run: loop-delay ';

const TICK_MS = 1;

export interface LoopDelayWindow {
  /** When the window ended (ISO). */
  time: string;
  windowMs: number;
  /** Ticks of the 1 ms timer in the window. */
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /**
   * The loop's longest own block: of each tick's delay, what is left less
   * the time the loop thread waited for a CPU in it, the longest (not
   * necessarily the tick of maxMs). Absent where the kernel keeps no
   * scheduler figures (or in a report from a noshell before it).
   */
  maxOwnMs?: number;
  /** The loop thread's time waiting for a CPU in the window, ms (absent as maxOwnMs). */
  waitMs?: number;
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

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const ms3 = (x: number) => Number(x.toFixed(3));

/**
 * The second field of a schedstat text ("<on CPU ns> <waiting ns> <slices>"),
 * in ms; NaN if it is not that.
 */
export function schedstatWaitMs(text: string): number {
  let field = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (field === 1) value = value * 10 + (c - 48);
      digits++;
    } else if (c === 32 && field === 0 && digits > 0) {
      field = 1;
      digits = 0;
    } else {
      break;
    }
  }
  return field === 1 && digits > 0 ? value / 1e6 : NaN;
}

/** A reader of the calling thread's wait for a CPU so far, ms; null where the kernel keeps none. */
function waitReader(): { read(): number; close(): void } | null {
  let fd: number;
  try {
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return null;
  }
  const buf = Buffer.alloc(96);
  const read = () => {
    try {
      return schedstatWaitMs(buf.toString('latin1', 0, readSync(fd, buf, 0, buf.length, 0)));
    } catch {
      return NaN;
    }
  };
  // A kernel that keeps no figures gives "0 0 0": a thread that runs this has been on a CPU.
  let first = '';
  try {
    first = buf.toString('latin1', 0, readSync(fd, buf, 0, buf.length, 0));
  } catch {
    // Unreadable: as if absent.
  }
  if (Number.isNaN(schedstatWaitMs(first)) || first.startsWith('0 ')) {
    closeSync(fd);
    return null;
  }
  let open = true;
  return {
    read,
    close: () => {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

/** Starts the windows; `write` gets each line (with its newline). */
export function startLoopDelayReport(windowMs: number, write: (line: string) => void): { stop(): void } {
  const waits = waitReader();
  let last = performance.now();
  let lastWait = waits?.read() ?? NaN;
  let windowStart = last;
  let windowWait = lastWait;
  let delays: number[] = [];
  let maxOwn = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    // Timers have 1 ms granularity: a tick up to ~1 ms early is no delay.
    const delay = Math.max(0, now - last - TICK_MS);
    delays.push(delay);
    last = now;
    if (waits !== null) {
      const wait = waits.read();
      maxOwn = Math.max(maxOwn, delay - (wait - lastWait));
      lastWait = wait;
    }
    if (now - windowStart < windowMs) return;
    const sorted = delays.sort((a, b) => a - b);
    const mem = process.memoryUsage();
    const w: LoopDelayWindow = {
      time: new Date().toISOString(), windowMs: Math.round(now - windowStart), samples: sorted.length,
      p50Ms: ms3(percentile(sorted, 50)), p99Ms: ms3(percentile(sorted, 99)), maxMs: ms3(sorted[sorted.length - 1]),
      ...(waits !== null && !Number.isNaN(maxOwn) ? { maxOwnMs: ms3(Math.max(0, maxOwn)), waitMs: ms3(lastWait - windowWait) } : {}),
      heapUsedBytes: mem.heapUsed, rssBytes: mem.rss,
    };
    windowStart = now;
    windowWait = lastWait;
    delays = [];
    maxOwn = 0;
    write(`${LOOP_DELAY_PREFIX}${JSON.stringify(w)}\n`);
  }, TICK_MS);
  // A report never keeps the process alive.
  timer.unref();
  // Idempotent: a second stop closes nothing (the fd's number may be another file's by then).
  return {
    stop: () => {
      clearInterval(timer);
      waits?.close();
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
