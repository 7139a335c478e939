// The one typed boundary between TypeScript and the native addon.
import path from 'node:path';
import { existsSync } from 'node:fs';
import nodeGypBuild from 'node-gyp-build';
import { bindingLoadError, localBuildPath } from './load-error';

/** Mirrors noshell_method_t in native/core/spawn.h. */
export enum NativeMethod { Auto = 0, PosixSpawn = 1, Vfork = 2, Fork = 3 }

/** Mirrors noshell_stdio_kind_t in native/core/spawn.h. */
export enum NativeStdio { Pipe = 0, Ignore = 1, Inherit = 2, Fd = 3, Stdout = 4 }

/** Mirrors the NOSHELL_* flags in native/core/spawn.h. */
export enum NativeFlag {
  NewProcessGroup = 1, SetUid = 2, SetGid = 4, SetGroups = 8, NewSession = 32, DieWithParent = 64, SetNice = 128,
  SetCgroup = 256, JoinProcessGroup = 512,
}

/** Mirrors noshell_redirect_kind_t in native/core/spawn.h. */
export enum NativeRedirect { Open = 0, Dup = 1, Close = 2 }

/** Redirections as the native side takes them: [fd, NativeRedirect, oflags, src, path | null] per redirection. */
export type NativeRedirects = Array<number | string | null>;

/** Called once when the child is reaped and its captured streams ended.
 * exitCode -1 with signal 0: the status was lost (another part of the
 * process reaped the child). stdout/stderr: captured output, or undefined
 * for streams not captured (a Buffer when a string was asked for but the
 * output is too long for one). */
export type NativeExitCallback = (
  exitCode: number, signal: number, userUs: number, systemUs: number, maxRssKb: number,
  stdout: string | Buffer | undefined, stderr: string | Buffer | undefined,
  /** Bit 1: stdout went past maxBuffer, bit 2: stderr; bit 4: the output grace ended with a pipe still open. */
  overflowed: number,
  /** With NativeCapture.All: both captured streams interleaved as they came. */
  all: string | Buffer | undefined,
) => void;

/** A captured stream (1 stdout, 2 stderr) went past maxBuffer and was closed. */
export type NativeOverflowCallback = (stream: 1 | 2) => void;

/** Bits of the `capture` argument. */
export enum NativeCapture { Stdout = 1, Stderr = 2, AsString = 4, Truncate = 8, All = 16 }

/** Positions of one finished job's numbers in an execInit batch. */
export enum ExecField {
  Id = 0, Errno, Step, Pid, ExitCode, Signal, UserUs, SystemUs, MaxRssKb, Flags, DurationMs,
  /** Step 'redirect': the index of the redirection that failed; else -1. */
  Redirect,
}
export const EXEC_RESULT_FIELDS = 12;

export type ExecResultsCallback = (numbers: Float64Array, outputs: unknown[], room: boolean) => void;

/** Bits of ExecField.Flags (NOSHELL_JOB_* in native/executor/executor.h). */
export enum ExecFlag {
  OverflowStdout = 1, OverflowStderr = 2, TimedOut = 4, Cancelled = 8, Aborted = 16, StatusKnown = 32, OutputCut = 64,
}

/** Id of a watched child; stale ids are ignored (kill answers ESRCH). */
export type NativeWatch = number & { readonly __brand: 'NativeWatch' };

export interface NativeBinding {
  /**
   * Starts a child. `out` (an Int32Array(7)) receives [errno, step, pid,
   * stdinFd, stdoutFd, stderrFd, redirect]: errno 0 means the child runs and
   * the return value watches it; step 'redirect': `redirect` is the index of
   * the redirection that failed. Streams named in `capture` are read
   * natively (their fds in `out` are -1) and handed to onExit.
   */
  spawn(
    file: string,
    argv: readonly string[],
    envp: readonly string[] | null,
    /** PATH to search; null: environ's PATH when envp is null, else /bin:/usr/bin. */
    searchPath: string | null,
    cwd: string | null,
    stdio: Int32Array,
    flags: number,
    uid: number,
    gid: number,
    method: NativeMethod,
    out: Int32Array,
    capture: number,
    maxBuffer: number,
    onExit: NativeExitCallback,
    onOverflow: NativeOverflowCallback | undefined,
    /** Supplementary groups (with the SetGid flag); null clears them. */
    groups: Uint32Array | null,
    /** The child's settings (native/napi/child-setup.h), or null. */
    setup: Float64Array | null,
    /** A cgroup v2 directory (with the SetCgroup flag), or null. */
    cgroup: string | null,
    /** ms captured output is still read after the child's exit while something else holds it; -1: to its end. */
    outputGraceMs: number,
    /** Applied in order in the child, as its user, after the pipes; null: none. */
    redirects: NativeRedirects | null,
    /** [stdout, stderr]: read ends (-1: none) of pipes whose write end the child gets as that
     * fd, captured as its output (taken over: closed whatever happens); null: none. */
    captureFrom: Int32Array | null,
    /** The output grace waits for releaseGrace() (a pipeline's last stage). */
    holdGrace: boolean,
  ): NativeWatch | undefined;
  /** A held output grace may start: now if the child has exited, else at its exit. */
  releaseGrace(watch: NativeWatch): void;
  /** pipe2(O_CLOEXEC): [readFd, writeFd]; throws an Error with errno and syscall. */
  pipe(): Int32Array;
  ref(watch: NativeWatch): void;
  unref(watch: NativeWatch): void;
  /**
   * kill(2); returns 0 or errno, ESRCH once the child is reaped (mode 0: once
   * it has exited). mode 0: the child; 1: its process group; 2: the group, and
   * SIGKILL to what is left of the group when the child exits (at once if it
   * has). The child is reaped only after its captured output has ended, so
   * until then the group id cannot have been reused.
   */
  kill(watch: NativeWatch, signal: number, mode: 0 | 1 | 2): number;
  /** Stop reading captured output once the child has exited (at once if it has). */
  abandon(watch: NativeWatch): void;
  /**
   * When the child has exited and its output grace runs: lets the output go
   * now (as the grace's end would) and gives true; else false, nothing done.
   */
  cutOutput(watch: NativeWatch): boolean;
  /**
   * Starts this environment's executor thread (a second call does nothing).
   * `onResults(numbers, outputs, room)`: a batch of outputs.length / 3
   * jobs; job i has its EXEC_RESULT_FIELDS numbers (see ExecField) at
   * numbers[i * EXEC_RESULT_FIELDS...] and its stdout, stderr (undefined
   * where not captured) and with NativeCapture.All both interleaved at
   * outputs[3 * i], outputs[3 * i + 1], outputs[3 * i + 2]. `numbers`
   * is one array reused for every batch: valid during the call only.
   * `room`: a refused submit may be retried.
   */
  execInit(onResults: ExecResultsCallback): void;
  /**
   * Queues a buffered exec. Returns its id (> 0); 0 when the queue is full
   * (retry after onResults(_, true)); a negative errno when a caller's fd
   * could not be taken (step 'stdio'). Throws TypeError for bad arguments.
   */
  execSubmit(
    file: string, argv: readonly string[], envp: readonly string[] | null, searchPath: string | null,
    cwd: string | null, stdio: Int32Array, flags: number, uid: number, gid: number, method: NativeMethod,
    groups: Uint32Array | null, capture: number, maxBuffer: number, input: Uint8Array | null,
    timeoutMs: number, killSignal: number, forceKillAfterMs: number, killGroup: boolean, ref: boolean,
    setup: Float64Array | null, cgroup: string | null, outputGraceMs: number, redirects: NativeRedirects | null,
  ): number;
  /** An abort: a queued exec never starts, a running one is terminated. */
  execCancel(id: number): void;
  /**
   * Stops this environment's executor threads now (at process exit): their
   * running cleanup children's groups get killSignal, queued execs never
   * start, nothing settles. execSubmit must not be called after it.
   */
  execShutdown(): void;
  /**
   * Runs a buffered exec (execSubmit's arguments) to its end on this
   * thread: [numbers (one job's ExecFields), [stdout, stderr, all]], or a
   * negative errno when a caller's fd could not be taken or nothing could be
   * set up (step 'stdio'). Blocks the event loop for the whole run.
   */
  execSync(
    file: string, argv: readonly string[], envp: readonly string[] | null, searchPath: string | null,
    cwd: string | null, stdio: Int32Array, flags: number, uid: number, gid: number, method: NativeMethod,
    groups: Uint32Array | null, capture: number, maxBuffer: number, input: Uint8Array | null,
    timeoutMs: number, killSignal: number, forceKillAfterMs: number, killGroup: boolean, ref: boolean,
    setup: Float64Array | null, cgroup: string | null, outputGraceMs: number, redirects: NativeRedirects | null,
  ): [Float64Array, unknown[]] | number;
  /** [queued, running, busy ms, spawned] of this environment's executor. */
  execStats(): [number, number, number, number];
  /**
   * Writes per-check family `family`'s sample lines (`name` + labels + value)
   * of checks state[0] … state[1] - 1 into `out` at state[2], from a
   * scrape's columns (row, bits, at, item0, slot0, ibits, ipiece, slots) and
   * pieces (native/metrics/scrape-lines.h; state[3…6]: checks,
   * items, slots and pieces in them), and moves state[0] and state[2] on.
   * Gives 0 when done, else the bytes the next check needs (make room, call
   * again); a TypeError when the columns do not hold together.
   */
  scrapeLines(
    family: number, name: Uint8Array,
    columns: readonly [Float64Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Uint32Array, Float64Array],
    segments: readonly Uint8Array[], ends: readonly Uint32Array[], state: Float64Array, out: Uint8Array,
  ): number;
  /**
   * mallopt(M_MMAP_THRESHOLD, bytes): glibc's malloc maps a block of
   * `bytes` or more that no free heap chunk can serve on its own and
   * unmaps it when freed, and no longer moves the threshold.
   * Process-wide. true when glibc took it; false without glibc.
   * TypeError unless a whole number 0 … 2^31 - 1.
   */
  mmapThreshold(bytes: number): boolean;
  /** Names of noshell_step_t values, by index. */
  readonly steps: readonly string[];
  /**
   * Whether the addon reads environ under Node's own environment lock
   * (native/napi/inherited-env.cc). When false, envp null must not be passed:
   * nothing could keep another thread from changing environ meanwhile.
   */
  readonly envLocked: boolean;
}

/**
 * A build from source (`npx noshell build-addon` in an installed package,
 * `npm run build:native` in a checkout) wins over the prebuilds, as
 * node-gyp-build's own build/ would; then node-gyp-build picks the prebuild.
 */
function loadBinding(root: string): NativeBinding {
  const local = localBuildPath(root);
  try {
    if (existsSync(local)) {
      const addon = { exports: {} };
      process.dlopen(addon, local);
      return addon.exports as NativeBinding;
    }
    return nodeGypBuild(root) as NativeBinding;
  } catch (cause) {
    throw bindingLoadError(root, cause);
  }
}

export const binding: NativeBinding = loadBinding(path.join(__dirname, '..', '..'));
