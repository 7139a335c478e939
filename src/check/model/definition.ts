// What CheckRunner takes and gives: check definitions and their checks,
// results, stats, and the clock it schedules by.
import { gotText, parseDuration, type Duration } from '../../util/duration';
import type { ExecutorStats } from '../../process/executor';
import { describe } from '../../util/validate';
import type { CheckOptions, CheckResult, StateName } from '../run-check';
import type { Percentiles } from './stats';

/** A check definition's `metrics` field: false leaves out every noshell_check_* series of the check. */
export type CheckMetricsOption = boolean | { perfdata?: boolean | undefined };

export interface CheckDefinition extends CheckOptions {
  id: string;
  command: string | readonly string[];
  /** ms between regular runs, or a duration with a unit as in checks files ("30s", "5m"). */
  interval: Duration;
  /** ms (or "10s"…) between retries while a non-OK state is not yet confirmed (default: interval). */
  retryInterval?: Duration | undefined;
  /** Runs that must agree before a non-OK state is HARD (default 1: no retries). */
  maxAttempts?: number | undefined;
  /** false: none of the check's noshell_check_* series; { perfdata: false }: all but its perfdata ones (default true). */
  metrics?: CheckMetricsOption | undefined;
}

/** A definition as the runner keeps it (checkStatus(), a scrape): its durations in ms. */
export interface KeptDefinition extends CheckDefinition {
  interval: number;
  retryInterval?: number | undefined;
}

export interface Clock {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

export interface RunnerOptions extends CheckOptions {
  /** Checks running at once (default 32). */
  concurrency?: number | undefined;
  /**
   * ms (or "10ms"…) between the runner's start ticks: checks due between two
   * ticks start together at the next one, at most this late (default 0: each
   * when it is due). Fewer wake-ups: less CPU per check.
   */
  tick?: Duration | undefined;
  /** Time source and timers; injectable for tests. */
  clock?: Clock | undefined;
}

export interface CheckRunResult extends CheckResult {
  id: string;
  attempt: number;
  maxAttempts: number;
  stateType: 'SOFT' | 'HARD';
  /** When it was due, when it started and ended (clock ms). */
  scheduledAt: number;
  startedAt: number;
  finishedAt: number;
  /** startedAt - scheduledAt: time spent waiting for the timer and the queue. */
  latencyMs: number;
}

export interface RunnerStats {
  checks: number;
  running: number;
  queued: number;
  completed: number;
  byState: Record<StateName, number>;
  timedOut: number;
  spawnErrors: number;
  truncated: number;
  viaShell: number;
  /** Regular runs skipped because the previous one was still running or queued. */
  skipped: number;
  checksPerSecond: number;
  latencyMs: Percentiles;
  executionMs: Percentiles;
  /** This thread's exec executor (shared by every runner and exec on it). */
  executor: ExecutorStats;
}

export const systemClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (h) => clearTimeout(h as NodeJS.Timeout),
};

const defKeys = new Set(['id', 'command', 'interval', 'retryInterval', 'maxAttempts', 'metrics']);

export const MAX_TIMER_MS = 2 ** 31 - 1;

function positive(value: unknown, what: string): number {
  // A duration with a unit as checks files take it ("30s"); a bare string number is ms.
  if (typeof value === 'string') value = parseDuration(value, what);
  // At least 1 ms: smaller steps vanish in an epoch-ms float.
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 1) {
    throw new TypeError(`${what} must be a number of milliseconds >= 1, got ${describe(value)}`);
  }
  return value;
}

/** The longest `tick` a runner takes: a minute (a monitoring core's own ticks are a second). */
export const MAX_TICK_MS = 60_000;

/** Validates a runner's `tick`: 0 (none) or 1 ms to MAX_TICK_MS, as ms or a duration ("10ms"). */
export function runnerTick(value: unknown): number {
  if (value === undefined) return 0;
  const ms = parseDuration(value, 'tick');
  if (ms !== 0 && (ms < 1 || ms > MAX_TICK_MS)) {
    throw new TypeError(`tick must be 0 or from 1 to ${MAX_TICK_MS} ms, got ${gotText(value)}`);
  }
  return ms;
}

/** What --tick says: 0, or a duration with its unit (a bare 50 would be 50 s on a command line, where 50 ms was meant). */
export const TICK_TEXT = `0, or a duration with a unit from 1ms to ${MAX_TICK_MS / 1000}s (50ms, 1s)`;

/** --tick's text in ms; a TypeError when it is not TICK_TEXT. */
export function tickFromText(text: string): number {
  const t = text.trim();
  let bare = t.length > 0;
  for (let i = 0; i < t.length && bare; i++) {
    const c = t.charCodeAt(i);
    bare = (c >= 48 && c <= 57) || c === 46;
  }
  if (t.startsWith('-') || (bare && Number(t) !== 0)) throw new TypeError(TICK_TEXT);
  return runnerTick(parseDuration(t, '--tick', 'ms'));
}

/** Validates a definition; returns its attempts and its check options (runner defaults under it). */
export function checkDefinition(def: CheckDefinition, defaults: CheckOptions): {
  maxAttempts: number; options: CheckOptions; interval: number; retryInterval: number | undefined;
} {
  if (typeof def !== 'object' || def === null) throw new TypeError(`add: expected a check definition, got ${describe(def)}`);
  if (typeof def.id !== 'string' || def.id === '') throw new TypeError(`add: id must be a non-empty string, got ${describe(def.id)}`);
  if (typeof def.command !== 'string' && !Array.isArray(def.command)) {
    throw new TypeError(`add: command of ${def.id} must be a string or an argv array`);
  }
  const interval = positive(def.interval, `interval of ${def.id}`);
  const retryInterval = def.retryInterval === undefined ? undefined : positive(def.retryInterval, `retryInterval of ${def.id}`);
  const maxAttempts = def.maxAttempts ?? 1;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new TypeError(`maxAttempts of ${def.id} must be a positive integer, got ${describe(def.maxAttempts)}`);
  }
  checkMetricsOption(def.metrics, def.id);
  const options: Record<string, unknown> = { ...defaults };
  // An option the definition leaves undefined keeps the runner's (issue 17).
  for (const [k, v] of Object.entries(def)) if (!defKeys.has(k) && v !== undefined) options[k] = v;
  return { maxAttempts, options, interval, retryInterval };
}

/** A stable fraction in [0, 1) from a string (FNV-1a). */
export function hashFraction(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 2 ** 32;
}

/** Validates a check definition's `metrics` field. */
export function checkMetricsOption(value: unknown, id: string): void {
  if (value === undefined || typeof value === 'boolean') return;
  const ok = typeof value === 'object' && value !== null && !Array.isArray(value)
    && Object.keys(value).every((k) => k === 'perfdata')
    && ['boolean', 'undefined'].includes(typeof (value as { perfdata?: unknown }).perfdata);
  if (!ok) throw new TypeError(`metrics of ${id} must be true, false or { perfdata: boolean }, got ${describe(value)}`);
}
