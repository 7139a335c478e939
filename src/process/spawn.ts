import { binding, type NativeOverflowCallback } from '../binding/binding';
import { spawnErrorOf, type SpawnErrorPlace } from './errors';
import { normalizeSpawn, type NormalizedSpawn, type SpawnOptions } from './options';
import { Subprocess } from './subprocess';
import { traceExit, traceStart } from './diagnostics';

/** Throws the AbortSignal's reason when it has already fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
  }
}

/** Native output capture for the buffered paths (exec, runCheck). */
export interface CaptureRequest {
  /** NativeCapture bits. */
  flags: number;
  maxBuffer: number;
  onOverflow?: NativeOverflowCallback;
  /** ms output is still read after the child's exit while something else holds it; -1: to its end. */
  outputGrace: number;
  /** A pipeline's last stage: [stdout, stderr] read ends of shared pipes to capture (taken over; -1: none). */
  captureFrom?: Int32Array;
  /** A pipeline's last stage: the grace waits for binding.releaseGrace(). */
  holdGrace?: boolean;
}

/** Starts a checked request; throws SpawnError when the program cannot run. */
export function spawnNormalized(opts: NormalizedSpawn, capture?: CaptureRequest, place?: SpawnErrorPlace): Subprocess {
  throwIfAborted(opts.signal);
  const out = new Int32Array(7);
  let child: Subprocess | undefined;
  const started = performance.now();
  const watch = binding.spawn(
    opts.file, opts.argv, opts.envp, opts.searchPath, opts.cwd, opts.stdio, opts.flags,
    opts.uid, opts.gid, opts.method, out, capture?.flags ?? 0, capture?.maxBuffer ?? 0,
    // Runs from the libuv loop, never before spawn() has returned.
    (code, sig, userUs, systemUs, maxRss, stdout, stderr, overflowed, all) =>
      child!._onExit(code, sig, userUs, systemUs, maxRss, stdout, stderr, overflowed, all),
    capture?.onOverflow,
    opts.groups,
    opts.setup,
    opts.cgroup,
    capture?.outputGrace ?? -1,
    opts.redirects,
    capture?.captureFrom ?? null,
    capture?.holdGrace === true,
  );
  if (watch === undefined) {
    const error = spawnErrorOf(opts, out[0], binding.steps[out[1]] ?? 'spawn', out[6], place?.stage, place?.stages);
    traceExit(traceStart(opts, 'loop', null), null, error);
    throw error;
  }
  child = new Subprocess(opts, out, watch, started);
  child._graceful = (capture?.outputGrace ?? -1) >= 0;
  child._traced = traceStart(opts, 'loop', child.pid);
  return child;
}

/**
 * Starts `file` with `args`, no shell involved. Throws TypeError/RangeError for
 * bad input and SpawnError (code ENOENT, EACCES, ENOEXEC, …) when the program
 * cannot be started; nothing is left running in either case.
 */
export function spawn(file: string, args?: readonly string[], options?: SpawnOptions): Subprocess {
  return spawnNormalized(normalizeSpawn(file, args, options));
}
