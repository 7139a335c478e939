// The last result of each check as the runner keeps it (issue 19): one
// record per check, its numbers in one array of doubles. A kept
// CheckRunResult held each of its five times and two CPU times in a number
// box of its own (V8 boxes a double field), plus its rusage object and a
// property store: ~11 heap objects per check of 41, at 100,000 checks 1.1
// million objects for every major GC to mark while both cores run checks.
// The result a 'result' listener gets is the whole object, as before;
// checkStatus() makes one from the record each time it is asked (equal in
// every field, a new object per call).
import type { CheckRunResult } from './definition';
import type { PerfDatum } from '../plugin/perfdata';
import { STATE_NAMES } from '../run-check';

/**
 * What the per-check series read of a last result: a CheckRunResult has
 * it, and so does the runner's record of one (read without making a result).
 */
export type RunFigures = Pick<CheckRunResult, 'state' | 'stateType' | 'attempt' | 'maxAttempts' | 'finishedAt' | 'durationMs' | 'latencyMs' | 'perfdata'>;

// Where each number is in the record's array.
const SCHEDULED = 0;
const STARTED = 1;
const FINISHED = 2;
const DURATION = 3;
const USER_CPU = 4;
const SYSTEM_CPU = 5;
const MAX_RSS = 6;

const TIMED_OUT = 1;
const TRUNCATED = 2;
const VIA_SHELL = 4;
const HARD = 8;
const OUTPUT_CUT = 16;

/** The perfdata errors of every record that has none (a result gets an array of its own). */
const NO_ERRORS = Object.freeze([]) as unknown as string[];

export class LastRun implements RunFigures {
  readonly id: string;
  readonly state: CheckRunResult['state'];
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly exitCode: number | null;
  readonly #flags: number;
  /** The seven numbers above, unboxed (a packed array of doubles, or of small integers when all are). */
  readonly #n: number[];
  readonly output: string;
  readonly longOutput: string;
  readonly stdout: string;
  readonly stderr: string;
  readonly command: string;
  readonly signal: CheckRunResult['signal'];
  readonly spawnError: string | null;
  readonly perfdata: PerfDatum[];
  readonly perfdataErrors: string[];

  constructor(r: CheckRunResult) {
    this.id = r.id;
    this.state = r.state;
    this.attempt = r.attempt;
    this.maxAttempts = r.maxAttempts;
    this.exitCode = r.exitCode;
    this.#flags = (r.timedOut ? TIMED_OUT : 0) | (r.truncated ? TRUNCATED : 0) | (r.outputCut ? OUTPUT_CUT : 0) | (r.viaShell ? VIA_SHELL : 0) | (r.stateType === 'HARD' ? HARD : 0);
    this.#n = [r.scheduledAt, r.startedAt, r.finishedAt, r.durationMs, r.rusage.userCpuMs, r.rusage.systemCpuMs, r.rusage.maxRssKb];
    this.output = r.output;
    this.longOutput = r.longOutput;
    this.stdout = r.stdout;
    this.stderr = r.stderr;
    this.command = r.command;
    this.signal = r.signal;
    this.spawnError = r.spawnError;
    // A copy of its length: a parsed result's array grew by push() and had room for ~17 items (5 used at 100,000 checks: ~10 MB).
    this.perfdata = r.perfdata.slice();
    this.perfdataErrors = r.perfdataErrors.length === 0 ? NO_ERRORS : r.perfdataErrors.slice();
  }

  get stateType(): CheckRunResult['stateType'] {
    return this.#flags & HARD ? 'HARD' : 'SOFT';
  }

  get finishedAt(): number {
    return this.#n[FINISHED];
  }

  get durationMs(): number {
    return this.#n[DURATION];
  }

  /** startedAt - scheduledAt, as the result has it (the same subtraction of the same numbers). */
  get latencyMs(): number {
    return this.#n[STARTED] - this.#n[SCHEDULED];
  }

  /** The result this record was made from: equal in every field and in their order, a new object per call. */
  result(): CheckRunResult {
    const n = this.#n;
    const f = this.#flags;
    return {
      state: this.state, stateName: STATE_NAMES[this.state], output: this.output, longOutput: this.longOutput,
      perfdata: this.perfdata, perfdataErrors: this.perfdataErrors === NO_ERRORS ? [] : this.perfdataErrors, exitCode: this.exitCode,
      signal: this.signal, timedOut: (f & TIMED_OUT) !== 0, truncated: (f & TRUNCATED) !== 0,
      outputCut: (f & OUTPUT_CUT) !== 0, durationMs: n[DURATION],
      rusage: { userCpuMs: n[USER_CPU], systemCpuMs: n[SYSTEM_CPU], maxRssKb: n[MAX_RSS] },
      stdout: this.stdout, stderr: this.stderr, command: this.command, viaShell: (f & VIA_SHELL) !== 0, spawnError: this.spawnError,
      id: this.id, attempt: this.attempt, maxAttempts: this.maxAttempts, stateType: f & HARD ? 'HARD' : 'SOFT',
      scheduledAt: n[SCHEDULED], startedAt: n[STARTED], finishedAt: n[FINISHED], latencyMs: n[STARTED] - n[SCHEDULED],
    };
  }
}
