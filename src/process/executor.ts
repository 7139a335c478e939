// The JS side of the off-thread executor (native/executor/executor.h): a buffered
// exec is validated here, queued to the addon's thread, and settled by one
// callback when it has finished. The event loop never waits for a spawn.
import { binding, EXEC_RESULT_FIELDS, ExecField, ExecFlag, NativeCapture } from '../binding/binding';
import { spawnErrorOf } from './errors';
import type { NormalizedSpawn } from './options';
import { throwIfAborted } from './spawn';
import { killOnExit } from './cleanup';
import { signalName, type ExitStatus } from './status';

/** A finished exec as the executor reports it. */
export interface ExecOutcome {
  status: ExitStatus;
  stdout: string | Buffer | undefined;
  stderr: string | Buffer | undefined;
  /** Bit 1: stdout went past maxBuffer, bit 2: stderr. */
  overflowed: number;
  /** The output grace ended with a pipe still held open by something else. */
  outputCut: boolean;
  /** With NativeCapture.All: stdout and stderr interleaved as they came. */
  all?: string | Buffer | undefined;
  /** The AbortSignal's reason when the exec was aborted while running. */
  abortReason: unknown;
}

export interface ExecRequest {
  opts: NormalizedSpawn;
  /** NativeCapture bits. */
  capture: number;
  maxBuffer: number;
  input: Uint8Array | null;
  /** false: a pending exec does not keep the event loop alive. */
  ref: boolean;
  /** ms output is still read after the child's exit while something else holds it; -1: to its end. */
  outputGrace: number;
}

/** numbers[at...]: the job's ExecFields; outputs[3 * at / EXEC_RESULT_FIELDS...]: stdout, stderr, all. */
type Settle = (numbers: Float64Array | null, outputs: unknown[] | null, at: number) => void;

const NO_BYTES = Buffer.alloc(0);
function emptyOutput(capture: number): string | Buffer {
  return capture & NativeCapture.AsString ? '' : NO_BYTES;
}

/** Execs in flight by id, and those waiting for room in a full queue. */
const inFlight = new Map<number, Settle>();
const waiting: Array<() => boolean> = [];
let state: 'new' | 'ready' | 'unavailable' | 'closed' = 'new';
let stopsOnExit = false;

/** A cleanup exec: at a normal exit the threads stop, and their cleanup children's groups get killSignal. */
function stopOnExit(): void {
  stopsOnExit = true;
  killOnExit(() => {
    if (state === 'ready') binding.execShutdown();
    state = 'closed';
  });
}
let startError: unknown;
let retryAt = 0;
/** After a failed start (no thread to be had), when to try again. */
const RETRY_MS = 1000;

function onResults(numbers: Float64Array, outputs: unknown[], room: boolean): void {
  // numbers is reused by the addon: read now, never kept.
  const end = (outputs.length / 3) * EXEC_RESULT_FIELDS;
  for (let at = 0; at < end; at += EXEC_RESULT_FIELDS) {
    const id = numbers[at + ExecField.Id];
    const settle = inFlight.get(id);
    if (settle === undefined) continue;
    inFlight.delete(id);
    settle(numbers, outputs, at);
  }
  if (room) {
    while (waiting.length > 0 && waiting[0]()) waiting.shift();
  }
}

/**
 * Whether this thread's executor runs (started on first use). False when
 * no thread could be had (EAGAIN at the thread limit): exec then spawns on
 * the event loop as before, which is slower but works, and the start is
 * tried again a second later.
 */
export function executorAvailable(): boolean {
  if (state === 'ready') return true;
  if (state === 'closed') return false;
  if (state === 'unavailable' && performance.now() < retryAt) return false;
  try {
    binding.execInit(onResults);
    state = 'ready';
  } catch (err) {
    startError = err;
    state = 'unavailable';
    retryAt = performance.now() + RETRY_MS;
  }
  return state === 'ready';
}

/** Why the executor could not start, for diagnostics. */
export function executorStartError(): unknown {
  return startError;
}

export interface ExecutorStats {
  /** Execs queued and not yet spawned (including those waiting for room). */
  queued: number;
  /** Spawned and not yet finished. */
  running: number;
  /** Time the executor thread spent working (not waiting), in ms since it started. */
  busyMs: number;
  /** Children spawned by it so far. */
  spawned: number;
}

export function executorStats(): ExecutorStats {
  const [queued, running, busyMs, spawned] = state === 'ready' ? binding.execStats() : [0, 0, 0, 0];
  return { queued: queued + waiting.length, running, busyMs, spawned };
}

/** A finished job's outcome from its numbers at `at` and its outputs (execInit's and execSync's layout). */
export function outcomeOf(numbers: Float64Array, outputs: unknown[], at: number, aborted: boolean, abortReason: unknown): ExecOutcome {
  const flags = numbers[at + ExecField.Flags];
  const code = numbers[at + ExecField.ExitCode];
  const sig = numbers[at + ExecField.Signal];
  const out = (3 * at) / EXEC_RESULT_FIELDS;
  return {
    status: {
      pid: numbers[at + ExecField.Pid],
      exitCode: code >= 0 && sig === 0 ? code : null,
      signal: sig > 0 ? signalName(sig) : null,
      timedOut: (flags & ExecFlag.TimedOut) !== 0,
      aborted,
      durationMs: numbers[at + ExecField.DurationMs],
      rusage: {
        userCpuMs: numbers[at + ExecField.UserUs] / 1000,
        systemCpuMs: numbers[at + ExecField.SystemUs] / 1000,
        maxRssKb: numbers[at + ExecField.MaxRssKb],
      },
    },
    stdout: outputs[out] as string | Buffer | undefined,
    stderr: outputs[out + 1] as string | Buffer | undefined,
    all: outputs[out + 2] as string | Buffer | undefined,
    overflowed: flags & (ExecFlag.OverflowStdout | ExecFlag.OverflowStderr),
    outputCut: (flags & ExecFlag.OutputCut) !== 0,
    abortReason,
  };
}

/** Runs one buffered exec on the executor thread. */
export function execOnExecutor(req: ExecRequest): Promise<ExecOutcome> {
  const o = req.opts;
  throwIfAborted(o.signal);
  if (o.cleanup && !stopsOnExit) stopOnExit();
  return new Promise<ExecOutcome>((resolve, reject) => {
    let id = 0;
    let aborted = false;
    const signal = o.signal;
    const onAbort = (): void => {
      aborted = true;
      if (id > 0) {
        binding.execCancel(id);
        return;
      }
      // Still waiting for room: it never reaches the executor.
      const i = waiting.indexOf(submit);
      if (i >= 0) waiting.splice(i, 1);
      settle(null, null, 0);
    };
    const settle: Settle = (numbers, outputs, at) => {
      signal?.removeEventListener('abort', onAbort);
      if (numbers === null || outputs === null || numbers[at + ExecField.Flags] & ExecFlag.Cancelled) {
        // Aborted while queued: it never ran. Reported like an abort of a
        // running command (aborted: true), with no pid, exit code or signal.
        resolve({
          status: {
            pid: 0, exitCode: null, signal: null, timedOut: false, aborted: true, durationMs: 0,
            rusage: { userCpuMs: 0, systemCpuMs: 0, maxRssKb: 0 },
          },
          stdout: req.capture & 1 ? emptyOutput(req.capture) : undefined,
          stderr: req.capture & 2 ? emptyOutput(req.capture) : undefined,
          overflowed: 0,
          outputCut: false,
          abortReason: signal?.reason,
        });
        return;
      }
      const errno = numbers[at + ExecField.Errno];
      if (errno !== 0) {
        reject(spawnErrorOf(o, errno, binding.steps[numbers[at + ExecField.Step]] ?? 'spawn', numbers[at + ExecField.Redirect]));
        return;
      }
      resolve(outcomeOf(numbers, outputs, at, aborted, aborted ? signal?.reason : undefined));
    };
    // true once the exec has been handed over (or has failed for good).
    function submit(): boolean {
      let r: number;
      try {
        r = binding.execSubmit(
          o.file, o.argv, o.envp, o.searchPath, o.cwd, o.stdio, o.flags, o.uid, o.gid, o.method, o.groups,
          req.capture, req.maxBuffer, req.input, o.timeout, o.killSignal, o.forceKillAfter, o.processGroup, req.ref,
          o.setup, o.cgroup, req.outputGrace, o.redirects,
        );
      } catch (err) {
        signal?.removeEventListener('abort', onAbort);
        reject(err);
        return true;
      }
      if (r === 0) return false;
      if (r < 0) {
        signal?.removeEventListener('abort', onAbort);
        reject(spawnErrorOf(o, -r, 'stdio'));
        return true;
      }
      id = r;
      inFlight.set(id, settle);
      return true;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    // FIFO: nothing overtakes an exec already waiting for room.
    if (waiting.length > 0 || !submit()) waiting.push(submit);
  });
}
