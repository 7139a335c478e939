// CheckRunner: runs checks on a schedule like a monitoring core. First runs
// spread over each interval, then every interval from the scheduled time (no
// drift), retries on non-OK states, a concurrency limit with a FIFO queue,
// never two runs of one check at once.
import { EventEmitter, setMaxListeners } from 'node:events';
import { executorStats } from '../../process/executor';
import { describe } from '../../util/validate';
import type { CheckFigures, CheckStatus } from '../model/check-status';
import { Fifo } from './fifo';
import { MinHeap } from './heap';
import { formatMetrics, metricsChunks, type MetricsChunksOptions } from '../../metrics/scrape/runner-text';
import { checkDefinitionOf, checkFiguresList, eachCheckFigures, type FiguresList } from '../model/figures-list';
import { NO_ERRORS } from '../plugin/plugin-output';
import { runCheck, runPlannedCheck, sharedCheckPlan, type CheckOptions, type CheckPlan, type CheckResult } from '../run-check';
import {
  checkDefinition, hashFraction, MAX_TIMER_MS, runnerTick, systemClock,
  type CheckDefinition, type Clock, type KeptDefinition, type RunnerOptions, type RunnerStats,
} from '../model/definition';
import { RunnerCounters } from './runner-counters';
import {
  CHANGED, EntryFigures, figuresOf, GRID, keepResult, newEntry, NEXT, planNext, QUEUED, runResultOf, statusOf, type Entry,
} from './runner-entry';
import { SharedOptions } from './shared-options';
import { LruMap } from '../../util/lru-map';

export type { CheckDefinition, CheckRunResult, Clock, KeptDefinition, RunnerOptions, RunnerStats } from '../model/definition';

/** Options objects whose checks a runner keeps (see #plans). */
const PLANS = 256;

export class CheckRunner extends EventEmitter {
  readonly #clock: Clock;
  readonly #concurrency: number;
  /** ms between start ticks, from #startedAt (0: none; see #arm). */
  readonly #tick: number;
  readonly #defaults: CheckOptions;
  readonly #entries = new Map<string, Entry>();
  /** Entries running now by id, removed ones included (at most one per id). */
  readonly #runningById = new Map<string, Entry>();
  /** Re-added while a removed namesake still runs: scheduled when it ends. */
  readonly #waiting = new Map<string, number>();
  /** Scheduled checks that start on ticks (all of them without a tick). */
  readonly #heap = new MinHeap<Entry>((e) => e.t[NEXT]);
  /** Scheduled checks that start when due although there is a tick: their interval or retry interval is under two ticks (#heapOf). */
  readonly #exact = new MinHeap<Entry>((e) => e.t[NEXT]);
  /**
   * Due checks waiting for a slot. A removed check stays in it until it comes
   * to the front, where it is skipped (removal is O(1)); #queued counts the rest.
   */
  readonly #queue = new Fifo<Entry>();
  #queued = 0;
  #running = 0;
  #timer: unknown = null;
  #timerAt = Infinity;
  #started = false;
  /**
   * Aborted by stop() past its deadline: every running check listens to this
   * one signal (an AbortController per check cost more than the rest of the
   * runner's bookkeeping for it).
   */
  readonly #stopAbort = new AbortController();
  readonly #options = new SharedOptions(this.#stopAbort.signal);
  /**
   * Each options object's checks, made on its first run: the runner's
   * options objects are its own (SharedOptions) and nothing writes to them,
   * so what runCheck would check on every run is checked once (null: they
   * fail, and runCheck says how on each run, as it always has). Checks
   * added one after another with the same options share one object, so a
   * checks file needs a few; past PLANS kept (checks with options of their
   * own) the one used longest ago is let go and made again when a run needs
   * it: ~1 KB each would otherwise grow with the number of checks, and the
   * objects many checks share, used on every turn, stay.
   */
  readonly #plans = new LruMap<CheckOptions, CheckPlan | null>(PLANS);
  #stopping: Promise<void> | null = null;
  #idle: Array<() => void> = [];
  #startedAt = 0;
  readonly #counters = new RunnerCounters();

  constructor(options: RunnerOptions = {}) {
    super();
    const { concurrency = 32, clock = systemClock, tick, ...defaults } = options;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new TypeError(`concurrency must be a positive integer, got ${describe(concurrency)}`);
    }
    this.#concurrency = concurrency;
    this.#tick = runnerTick(tick);
    this.#clock = clock;
    this.#defaults = defaults;
    // One listener per running check: `concurrency` of them is expected, not a leak.
    setMaxListeners(0, this.#stopAbort.signal);
  }

  /** Adds a check; scheduled at once when the runner is started. */
  add(def: CheckDefinition): this {
    const { maxAttempts, options, interval, retryInterval } = checkDefinition(def, this.#defaults);
    if (this.#entries.has(def.id)) throw new TypeError(`add: a check with id ${JSON.stringify(def.id)} exists already`);
    // Copied with Object.assign, not spread: a spread copy of each definition
    // got a hidden class of its own (two maps and descriptor arrays per check,
    // ~400 B each at 20,000 checks); assigned properties share one.
    const own = Object.assign({}, def) as KeptDefinition;
    own.maxAttempts = maxAttempts;
    // In ms from here on (the definition may give "30s").
    own.interval = interval;
    if (retryInterval !== undefined) own.retryInterval = retryInterval;
    const entry = newEntry(own, this.#options.like(options));
    this.#entries.set(def.id, entry);
    if (this.#started && this.#stopping === null) {
      // Joining a running schedule: a stable spot in the interval from the id.
      if (this.#runningById.has(def.id)) {
        // remove() + add() of a check that is still running: never two at once.
        this.#waiting.set(def.id, hashFraction(def.id));
      } else {
        this.#scheduleFirst(entry, hashFraction(def.id));
        this.#arm();
      }
    }
    return this;
  }

  /**
   * Replaces a check's definition, as remove() then add() (a run in progress
   * finishes first: never two at once), but the replacement keeps the last
   * result and when its state changed until its own first result: a reload
   * that changes a check leaves its state series, and an alert on a check
   * that never ran, alone for the up to one interval until it runs.
   */
  replace(def: CheckDefinition): this {
    const old = this.#entries.get(def.id);
    this.remove(def.id);
    this.add(def);
    if (old?.last !== null && old !== undefined) {
      const entry = this.#entries.get(def.id)!;
      entry.last = old.last;
      entry.t[CHANGED] = old.t[CHANGED];
    }
    return this;
  }

  /** Removes a check; a run in progress finishes (its result is still emitted). */
  remove(id: string): boolean {
    const entry = this.#entries.get(id);
    if (entry === undefined) return false;
    entry.removed = true;
    this.#entries.delete(id);
    this.#heapOf(entry).delete(entry);
    if (entry.queued) {
      entry.queued = false;
      // Nothing live left in the queue: let go of the removed entries it holds.
      if (--this.#queued === 0) this.#queue.clear();
    }
    this.#waiting.delete(id);
    return true;
  }

  /** Starts scheduling: first runs spread evenly over each check's interval. */
  start(): this {
    if (this.#started) return this;
    this.#started = true;
    const now = this.#clock.now();
    this.#startedAt = now;
    const entries = [...this.#entries.values()];
    // From the one instant the ticks count from: the first check is due on the first tick, not a hair after it.
    entries.forEach((e, i) => this.#scheduleFirst(e, i / entries.length, now));
    this.#arm();
    return this;
  }

  /**
   * Stops scheduling and drops queued runs; waits for running checks, and
   * after `deadline` ms (default: wait for them) aborts them (their groups
   * are killed). Resolves when nothing runs.
   */
  stop(options: { deadline?: number | undefined } = {}): Promise<void> {
    if (this.#stopping !== null) return this.#stopping;
    if (this.#timer !== null) this.#clock.clearTimer(this.#timer);
    this.#timer = null;
    this.#timerAt = Infinity;
    this.#queue.clear((e) => {
      e.queued = false;
    });
    this.#queued = 0;
    this.#stopping = new Promise<void>((resolve) => {
      if (this.#running === 0) return resolve();
      this.#idle.push(resolve);
      if (options.deadline !== undefined) {
        const t = setTimeout(() => {
          this.#stopAbort.abort(new Error('CheckRunner stopped'));
        }, options.deadline);
        this.#idle.push(() => clearTimeout(t));
      }
    });
    return this.#stopping;
  }

  stats(): RunnerStats {
    const now = this.#clock.now();
    return {
      checks: this.#entries.size,
      running: this.#running,
      queued: this.#queued,
      ...this.#counters.figures(now, this.#startedAt),
      executor: executorStats(),
    };
  }

  /**
   * Every configured check with its last result. `last` is made from the
   * runner's record of it on each call: equal to the result emitted, not
   * the same object.
   */
  checkStatus(): CheckStatus[] {
    return [...this.#entries.values()].map(statusOf);
  }

  /**
   * checkStatus() made one check at a time: the list of checks is taken now,
   * each status when it is read (a check removed meanwhile shows its last
   * state). A sliced scrape of 100,000 checks held all their status objects
   * at once, 30-140 ms of work and young objects to copy.
   */
  eachCheckStatus(): Generator<CheckStatus, void, undefined> {
    const entries = [...this.#entries.values()];
    return (function* statuses() {
      for (const e of entries) yield statusOf(e);
    })();
  }

  /**
   * eachCheckStatus() for the metrics: `last` is the runner's record, read
   * as it is (a scrape made a result object per check, and kept it to the
   * end of the scrape).
   */
  [eachCheckFigures](): Generator<CheckFigures, void, undefined> {
    const entries = [...this.#entries.values()];
    return (function* figures() {
      for (const e of entries) yield figuresOf(e);
    })();
  }

  /** [eachCheckFigures]() as a list taken now, read by index into one object (what a streamed scrape reads). */
  [checkFiguresList](): FiguresList {
    // forEach into an array of its size: a spread of the map made an iterator result per check, and grew the array.
    const entries = new Array<Entry>(this.#entries.size);
    let i = 0;
    this.#entries.forEach((e) => (entries[i++] = e));
    return new EntryFigures(entries);
  }

  /** The check's definition as the runner has it now (a scrape tells a removed check by it). */
  [checkDefinitionOf](id: string): object | undefined {
    return this.#entries.get(id)?.def;
  }

  /** stats() and every check's series in the Prometheus text exposition format. */
  metrics(): string {
    return formatMetrics(this);
  }

  /** metrics() in chunks, yielding to the event loop every few ms: for large runners (issue 19). */
  metricsChunks(options?: MetricsChunksOptions): AsyncGenerator<string, void, undefined> {
    return metricsChunks(this, options);
  }

  #scheduleFirst(entry: Entry, fraction: number, now = this.#clock.now()): void {
    const at = now + fraction * entry.def.interval;
    entry.t[GRID] = at;
    entry.t[NEXT] = at;
    entry.attempt = 1;
    this.#heapOf(entry).push(entry);
  }

  /**
   * Where a check waits for its next run. With a tick, a check whose interval
   * or retry interval is under two ticks starts when due: started on ticks,
   * its runs would fall on every tick at most and the slots between be
   * skipped (a 20 ms check under a 50 ms tick ran 21 times a second, not 50).
   */
  #heapOf(entry: Entry): MinHeap<Entry> {
    const tick = this.#tick;
    if (tick === 0) return this.#heap;
    const { interval, retryInterval = interval } = entry.def;
    return interval < 2 * tick || retryInterval < 2 * tick ? this.#exact : this.#heap;
  }

  /**
   * One timer, for whatever is due first; with a tick, for the first tick at
   * or after it (ticks count from start(), so two runners on one machine do
   * not wake together). A check due between ticks waits for the next one, and
   * the checks due in one tick start in one turn of the event loop, sharing
   * the timer and the threads' wake-ups that each check paid for alone: at
   * 900 checks a second the runner's CPU per check fell from 0.22 to 0.13 ms
   * with a 50 ms tick.
   */
  #arm(): void {
    if (this.#stopping !== null) return;
    const top = this.#heap.peek();
    const exact = this.#exact.peek();
    if (top === undefined && exact === undefined) return;
    let nextAt = top === undefined ? Infinity : top.t[NEXT];
    const tick = this.#tick;
    if (tick > 0 && top !== undefined) {
      const origin = this.#startedAt;
      const at = origin + Math.ceil((nextAt - origin) / tick) * tick;
      // Rounding may put it a hair before: the timer would find nothing due, and re-arm for the same instant.
      nextAt = at < nextAt ? nextAt : at;
    }
    const exactAt = exact === undefined ? Infinity : exact.t[NEXT];
    const onTick = tick > 0 && nextAt <= exactAt;
    if (!onTick) nextAt = Math.min(nextAt, exactAt);
    if (this.#timer !== null && this.#timerAt <= nextAt) return;
    if (this.#timer !== null) this.#clock.clearTimer(this.#timer);
    this.#timerAt = nextAt;
    const now = this.#clock.now();
    let delay = nextAt - now;
    // Node's timers count whole ms from the loop's cached time, and fire up to
    // 1 ms before the delay given is over: a tick's timer would find the checks
    // due in its last ms not due yet, and wake again for them.
    if (onTick && this.#clock === systemClock && delay > 0) delay = Math.ceil(delay) + 1;
    // Node turns delays past 2^31-1 ms into 1 ms: wake up early and re-arm instead.
    delay = Math.min(MAX_TIMER_MS, Math.max(0, delay));
    this.#timer = this.#clock.setTimer(() => this.#onTimer(), delay);
  }

  #onTimer(): void {
    this.#timer = null;
    this.#timerAt = Infinity;
    const now = this.#clock.now();
    for (;;) {
      // The two heaps merged: the queue stays in the order the checks were due.
      const top = this.#heap.peek();
      const exact = this.#exact.peek();
      const from = exact !== undefined && (top === undefined || exact.t[NEXT] < top.t[NEXT]) ? this.#exact : this.#heap;
      const first = from.peek();
      if (first === undefined || first.t[NEXT] > now) break;
      const entry = from.pop()!;
      entry.queued = true;
      entry.t[QUEUED] = entry.t[NEXT];
      this.#queued++;
      this.#queue.push(entry);
    }
    this.#pump();
    this.#arm();
  }

  #pump(): void {
    while (this.#running < this.#concurrency && this.#queued > 0 && this.#stopping === null) {
      const entry = this.#queue.shift()!;
      // Removed while it waited: remove() has counted it out already.
      if (!entry.queued) continue;
      entry.queued = false;
      this.#queued--;
      void this.#run(entry, entry.t[QUEUED]);
    }
  }

  async #run(entry: Entry, scheduledAt: number): Promise<void> {
    this.#running++;
    this.#runningById.set(entry.def.id, entry);
    entry.running = true;
    const startedAt = this.#clock.now();
    let result: CheckResult;
    try {
      const plan = this.#plans.get(entry.options, sharedCheckPlan);
      result = plan !== null ? await runPlannedCheck(entry.def.command, plan) : await runCheck(entry.def.command, entry.options);
    } catch (err) {
      // Only bad options get here (runCheck turns all else into results).
      result = {
        state: 3, stateName: 'UNKNOWN', output: `Check definition error: ${(err as Error).message}`, longOutput: '',
        perfdata: [], perfdataErrors: NO_ERRORS, exitCode: null, signal: null, timedOut: false, truncated: false,
        outputCut: false, durationMs: 0, rusage: { userCpuMs: 0, systemCpuMs: 0, maxRssKb: 0 }, stdout: '', stderr: '',
        command: String(entry.def.command), viaShell: false, spawnError: 'EINVAL',
      };
    }
    const finishedAt = this.#clock.now();
    entry.running = false;
    this.#running--;
    this.#runningById.delete(entry.def.id);

    const maxAttempts = entry.def.maxAttempts ?? 1;
    const wasRetry = entry.attempt > 1 && entry.t[NEXT] !== entry.t[GRID];
    const soft = result.state !== 0 && entry.attempt < maxAttempts;
    const run = runResultOf(entry, result, { scheduledAt, startedAt, finishedAt, maxAttempts, soft });
    this.#counters.add(run);
    const before = entry.last;
    keepResult(entry, run);
    // A replacement still showing this entry's result (replace() during this run) shows this one.
    const replacement = entry.removed ? this.#entries.get(entry.def.id) : undefined;
    if (replacement !== undefined && replacement !== entry && replacement.last === before && before !== null) {
      replacement.last = entry.last;
      replacement.t[CHANGED] = entry.t[CHANGED];
    }
    if (!entry.removed && this.#stopping === null) this.#scheduleNext(entry, soft, result.state, finishedAt, wasRetry);
    const waiting = this.#waiting.get(entry.def.id);
    const successor = this.#entries.get(entry.def.id);
    if (entry.removed && waiting !== undefined && successor !== undefined && this.#stopping === null) {
      this.#waiting.delete(entry.def.id);
      this.#scheduleFirst(successor, waiting);
      this.#arm();
    }
    // Bookkeeping is done before anyone's listener runs: a throwing listener
    // must not stall the queue or stop().
    this.#pump();
    if (this.#running === 0 && this.#stopping !== null) {
      for (const done of this.#idle.splice(0)) done();
    }
    try {
      this.emit('result', run);
    } catch (err) {
      // As from any event callback in Node: the listener's error is uncaught.
      process.nextTick(() => {
        throw err;
      });
    }
  }

  #scheduleNext(entry: Entry, soft: boolean, state: number, finishedAt: number, wasRetry: boolean): void {
    this.#counters.skip(planNext(entry, soft, state, finishedAt, wasRetry));
    this.#heapOf(entry).push(entry);
    this.#arm();
  }
}
