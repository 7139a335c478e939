// One configured check inside CheckRunner: its definition, options, times and
// last result, and the views made of it (status, metrics figures, the result
// emitted). The runner's scheduling and queueing live in runner.ts.
import type { CheckFigures, CheckStatus } from '../model/check-status';
import type { CheckRunResult, KeptDefinition } from '../model/definition';
import { LastRun } from '../model/last-run';
import type { CheckOptions, CheckResult } from '../run-check';

// An entry's times, in its array `t` of doubles: a double field of an
// object is a number box of its own, four per check (issue 19).
/** Next time on the regular grid: first run + k * interval. */
export const GRID = 0;
export const NEXT = 1;
/** When it was due, while it is queued. */
export const QUEUED = 2;
/** finishedAt of the first run, or of the last whose state differed; NaN before the first. */
export const CHANGED = 3;

export interface Entry {
  def: KeptDefinition;
  /** What runCheck gets: the definition's check options and the runner's stop signal. */
  options: CheckOptions;
  /** GRID, NEXT, QUEUED, CHANGED. */
  t: number[];
  attempt: number;
  running: boolean;
  /** In the queue of due checks (due at t[QUEUED]). */
  queued: boolean;
  removed: boolean;
  /** Its place in the heap of scheduled checks, -1 when not in it. */
  heapIndex: number;
  last: LastRun | null;
}

/** `own` is the runner's copy of the definition (maxAttempts filled in). */
export function newEntry(own: KeptDefinition, options: CheckOptions): Entry {
  return {
    // NaN first: the array holds doubles from the start, never boxes.
    def: own, options, t: [NaN, NaN, NaN, NaN], attempt: 1,
    running: false, queued: false, removed: false, heapIndex: -1, last: null,
  };
}

function changedAt(e: Entry): number | null {
  const at = e.t[CHANGED];
  return Number.isNaN(at) ? null : at;
}

/** What checkStatus() tells of an entry: `last` made from the record, a new object per call. */
export function statusOf(e: Entry): CheckStatus {
  return { id: e.def.id, definition: e.def, running: e.running, last: e.last === null ? null : e.last.result(), lastStateChangeAt: changedAt(e) };
}

/** statusOf() for the metrics: `last` is the record itself. */
export function figuresOf(e: Entry): CheckFigures {
  return { id: e.def.id, definition: e.def, running: e.running, last: e.last, lastStateChangeAt: changedAt(e) };
}

/** A scrape's list of entries, each read into the same object (metrics-snapshot.ts, FiguresList). */
export class EntryFigures {
  #f: CheckFigures | null = null;

  constructor(readonly entries: readonly Entry[]) {}

  get length(): number {
    return this.entries.length;
  }

  read(i: number): CheckFigures {
    const e = this.entries[i];
    const f = this.#f;
    // The first read makes the object, so it has figuresOf()'s shape.
    if (f === null) return (this.#f = figuresOf(e));
    f.id = e.def.id;
    f.definition = e.def;
    f.running = e.running;
    f.last = e.last;
    f.lastStateChangeAt = changedAt(e);
    return f;
  }
}

/** When a run of this entry started and ended, and whether its non-OK state is still soft. */
export interface RunTimes {
  scheduledAt: number;
  startedAt: number;
  finishedAt: number;
  maxAttempts: number;
  soft: boolean;
}

/** The result the runner emits for a run of `e`. */
export function runResultOf(e: Entry, result: CheckResult, at: RunTimes): CheckRunResult {
  // Spelled out rather than spread: one hidden class for every result
  // (a spread of results built in different places was ~4 % of the loop).
  return {
    state: result.state, stateName: result.stateName, output: result.output, longOutput: result.longOutput,
    perfdata: result.perfdata, perfdataErrors: result.perfdataErrors, exitCode: result.exitCode,
    signal: result.signal, timedOut: result.timedOut, truncated: result.truncated, outputCut: result.outputCut,
    durationMs: result.durationMs,
    rusage: result.rusage, stdout: result.stdout, stderr: result.stderr,
    // The same text every run: the last result's string is kept, this run's copy let go.
    command: e.last !== null && e.last.command === result.command ? e.last.command : result.command,
    viaShell: result.viaShell,
    spawnError: result.spawnError,
    id: e.def.id, attempt: e.attempt, maxAttempts: at.maxAttempts, stateType: at.soft ? 'SOFT' : 'HARD',
    scheduledAt: at.scheduledAt, startedAt: at.startedAt, finishedAt: at.finishedAt, latencyMs: at.startedAt - at.scheduledAt,
  };
}

/** Keeps `run` as the entry's last result (and when its state changed). */
export function keepResult(e: Entry, run: CheckRunResult): void {
  if (e.last === null || e.last.state !== run.state) e.t[CHANGED] = run.finishedAt;
  e.last = new LastRun(run);
}

/**
 * Sets the entry's next run after one that ended at `finishedAt`: a retry
 * after retryInterval while soft, else the next slot on its regular grid.
 * Returns how many regular slots passed meanwhile and were skipped (slots
 * passed during retries are not counted).
 */
export function planNext(e: Entry, soft: boolean, state: number, finishedAt: number, wasRetry: boolean): number {
  const t = e.t;
  if (soft) {
    e.attempt++;
    t[NEXT] = finishedAt + (e.def.retryInterval ?? e.def.interval);
    return 0;
  }
  if (state === 0) e.attempt = 1;
  const interval = e.def.interval;
  t[GRID] += interval;
  let missed = 0;
  if (t[GRID] <= finishedAt) {
    missed = Math.floor((finishedAt - t[GRID]) / interval) + 1;
    t[GRID] += missed * interval;
  }
  t[NEXT] = t[GRID];
  return wasRetry ? 0 : missed;
}
