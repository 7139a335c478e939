// Buffered exec/execFile: run to completion, collect stdout/stderr, reject on
// failure with ExecError carrying the whole result.
import { NativeCapture, NativeFlag, NativeStdio } from '../binding/binding';
import type { CommandInput, Pipeline } from '../command/command-list';
import { applyRedirects } from './redirects';
import { runList } from './run-list';
import { parseDuration, type Duration } from '../util/duration';
import { checkShellOption, quoteArg, resolveCommand, type ResolvedCommand, type ShellOption } from '../command/shell-option';
import { ExecError } from './errors';
import { commandArgv, describe, normalizeSpawn, type NormalizedSpawn, type SpawnOptions } from './options';
import { traceExit, traceStart } from './diagnostics';
import { execOnExecutor, executorAvailable, type ExecOutcome } from './executor';
import { spawnNormalized, type CaptureRequest } from './spawn';
import type { ExitStatus } from './status';
import type { Subprocess } from './subprocess';

export interface ExecOptions extends SpawnOptions {
  /** Written to the child's stdin, which is then closed. Default: stdin is /dev/null. */
  input?: string | Uint8Array | undefined;
  /** Bytes kept per stream (default 1 MiB); past it the child is killed. */
  maxBuffer?: number | undefined;
  encoding?: 'utf8' | 'buffer' | undefined;
  /** Reject on non-zero exit, signal, timeout, abort or maxBuffer (default true). */
  reject?: boolean | undefined;
  /** For command strings: false (default) never uses /bin/sh and throws
   * ShellSyntaxError when the string needs it; 'auto' uses /bin/sh -c only
   * then; true always. argv arrays never go through a shell. */
  shell?: ShellOption | undefined;
  /** false: a pending exec does not keep the event loop alive (like
   * subprocess.unref()). Default true. */
  ref?: boolean | undefined;
  /** After the child has exited, how long (ms, or "1s"…) its output is still
   * read while something else (a background grandchild) holds the pipes open;
   * then they are let go and `outputCut` is set. Default 100 ms; Infinity:
   * wait for the output's end, however long. */
  outputGrace?: Duration | undefined;
  /** true: the result's `all` holds stdout and stderr interleaved as they came (as `2>&1` would, but
   * with both kept apart too). Default false. */
  all?: boolean | undefined;
  /** A pipeline's status is that of its last stage to fail rather than of its last stage (bash's
   * `set -o pipefail`). Default false, as dash. */
  pipefail?: boolean | undefined;
}

/** Options whose `encoding` is left out or 'utf8': stdout and stderr are strings. */
export type ExecOptionsUtf8 = ExecOptions & { encoding?: 'utf8' | undefined };
/** Options with `encoding: 'buffer'`: stdout and stderr are Buffers. */
export type ExecOptionsBuffer = ExecOptions & { encoding: 'buffer' };

/** The result of exec/execFile; `T` follows `encoding` (string by default, Buffer for 'buffer'). */
export interface ExecResult<T extends string | Buffer = string | Buffer> extends ExitStatus {
  stdout: T;
  stderr: T;
  /** The command as run, for messages. */
  command: string;
  viaShell: boolean;
  /** Which stream ran past maxBuffer, if any. */
  maxBufferExceeded: 'stdout' | 'stderr' | null;
  /** The child had exited and something else still held its output open when `outputGrace` ended:
   * what that wrote later is not in stdout/stderr. */
  outputCut: boolean;
  /** With `all: true`: stdout and stderr interleaved as they came; else undefined. */
  all?: T | undefined;
}

const execKeys = new Set(['input', 'maxBuffer', 'encoding', 'reject', 'shell', 'ref', 'outputGrace', 'all', 'pipefail']);
/** NOSHELL_NO_EXECUTOR=1: every exec on the event-loop thread, as before the executor. */
let loopOnly = process.env.NOSHELL_NO_EXECUTOR === '1';

/** @internal For the benchmark's side-by-side rows: the event-loop path on or off; returns the previous setting. */
export function _setLoopOnly(on: boolean): boolean {
  const was = loopOnly;
  loopOnly = on;
  return was;
}
const DEFAULT_MAX_BUFFER = 1024 * 1024;
const DEFAULT_OUTPUT_GRACE = 100;
const MAX_TIMER_MS = 2 ** 31 - 1;

/** outputGrace in ms; -1 for Infinity (read output to its end). */
function outputGraceMs(value: unknown): number {
  if (value === undefined) return DEFAULT_OUTPUT_GRACE;
  if (value === Infinity) return -1;
  const ms = parseDuration(value, 'outputGrace');
  if (ms > MAX_TIMER_MS) throw new RangeError(`outputGrace must be at most ${MAX_TIMER_MS} ms or Infinity, got ${ms}`);
  return Math.ceil(ms);
}

const empty = Buffer.alloc(0);

function output(value: string | Buffer | undefined, encoding: 'utf8' | 'buffer'): string | Buffer {
  if (value === undefined) return encoding === 'buffer' ? empty : '';
  // A Buffer where a string was asked for: too long for a JS string. This
  // throws ERR_STRING_TOO_LONG, which is the honest answer.
  return encoding === 'buffer' || typeof value === 'string' ? value : value.toString('utf8');
}

function failureMessage(r: ExecResult, timeout: number): string | null {
  let what: string;
  if (r.maxBufferExceeded !== null) what = `Command's ${r.maxBufferExceeded} was larger than maxBuffer`;
  else if (r.timedOut) what = `Command timed out after ${timeout} ms`;
  else if (r.aborted) what = 'Command was aborted';
  else if (r.signal !== null) what = `Command was killed with ${r.signal}`;
  else if (r.exitCode !== 0) what = r.exitCode === null ? 'Command exit status was lost' : `Command failed with exit code ${r.exitCode}`;
  else return null;
  const stderr = typeof r.stderr === 'string' ? r.stderr : r.stderr.toString('utf8');
  const tail = stderr.trim() === '' ? '' : `\n${stderr.trimEnd().slice(-4096)}`;
  return `${what}: ${r.command}${tail}`;
}

/**
 * The event-loop path: spawn on this thread, capture through libuv. Taken
 * when NOSHELL_NO_EXECUTOR=1 (benchmarks compare both) or when the
 * executor thread could not be started.
 */
async function runOnLoop(
  spawnOpts: NormalizedSpawn, capture: number, maxBuffer: number, input: string | Uint8Array | undefined,
  truncate: boolean, ref: boolean, outputGrace: number,
): Promise<ExecOutcome> {
  let exceeded = 0;
  const request: CaptureRequest = { flags: capture, maxBuffer, outputGrace };
  // Truncating (checks) drops the excess and lets the plugin finish.
  if (!truncate) {
    request.onOverflow = (stream) => {
      if (exceeded === 0) exceeded = stream;
      child._terminate();
    };
  }
  const child = spawnNormalized(spawnOpts, request);
  if (!ref) child.unref();
  writeInput(child, input);
  const status = await child.exited;
  const captured = child._captured;
  const bits = captured?.overflowed ?? 0;
  const overflowed = truncate ? bits & 3 : exceeded;
  return {
    status, stdout: captured?.stdout, stderr: captured?.stderr, overflowed, outputCut: (bits & 4) !== 0,
    abortReason: child.abortReason, all: captured?.all,
  };
}

function writeInput(child: Subprocess, input: string | Uint8Array | undefined): void {
  const stdin = child.stdin;
  if (stdin === null) return;
  // A child that exits without reading gets its pipe closed: EPIPE is expected.
  stdin.on('error', () => {});
  if (input !== undefined) stdin.end(input);
  else stdin.end();
}

/**
 * Runs `file` with `args` (never a shell) and buffers its output: strings by
 * default, Buffers with `encoding: 'buffer'` (the result's type says which).
 */
export function execFile(file: string, args?: readonly string[], options?: ExecOptionsUtf8): Promise<ExecResult<string>>;
export function execFile(file: string, args: readonly string[] | undefined, options: ExecOptionsBuffer): Promise<ExecResult<Buffer>>;
export function execFile(file: string, args?: readonly string[], options?: ExecOptions): Promise<ExecResult>;
export function execFile(file: string, args?: readonly string[], options?: ExecOptions): Promise<ExecResult> {
  try {
    if (checkShellOption(options?.shell, 'execFile') === true) {
      throw new TypeError("execFile: shell: true makes no sense for an argv; use exec(string, { shell: true })");
    }
    if (typeof file !== 'string') throw new TypeError(`execFile: file must be a string, got ${describe(file)}`);
    let display = quoteArg(file);
    if (Array.isArray(args)) for (const a of args) display += ` ${quoteArg(String(a))}`;
    return run({ file, args: args as string[], env: undefined, viaShell: false, display, list: null }, options, 'execFile');
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * Runs a command string or an argv array and buffers its output. Strings
 * follow the shell's word rules without a shell (see parseCommand); one that
 * needs a shell throws ShellSyntaxError unless `shell` allows /bin/sh.
 */
export function exec(command: CommandInput, options?: ExecOptionsUtf8): Promise<ExecResult<string>>;
export function exec(command: CommandInput, options: ExecOptionsBuffer): Promise<ExecResult<Buffer>>;
export function exec(command: CommandInput, options?: ExecOptions): Promise<ExecResult>;
export function exec(command: CommandInput, options?: ExecOptions): Promise<ExecResult> {
  try {
    return run(resolveCommand(command, checkShellOption(options?.shell, 'exec'), 'exec'), options, 'exec');
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * The executor path, with its diagnostics messages: the start as it is queued
 * (no pid yet), the exit with the status. Untraced (no subscriber), the
 * executor's promise is handed back as it is: nothing more per exec.
 */
function runOnExecutor(
  opts: NormalizedSpawn, capture: number, maxBuffer: number, input: string | Uint8Array | undefined, ref: boolean,
  outputGrace: number,
): Promise<ExecOutcome> {
  const request = {
    opts, capture, maxBuffer, ref, outputGrace, input: inputBytes(input),
  };
  const traced = traceStart(opts, 'executor', null);
  if (traced.id === 0) return execOnExecutor(request);
  const failed = (e: unknown): never => {
    traceExit(traced, null, e instanceof Error ? e : new Error(String(e)));
    throw e;
  };
  let outcome: Promise<ExecOutcome>;
  try {
    outcome = execOnExecutor(request);
  } catch (e) {
    return failed(e);
  }
  return outcome.then((o) => {
    traceExit(traced, o.status);
    return o;
  }, failed);
}

/** @internal A checked exec request: what run() and the sync calls start, and how to read the outcome. */
export interface PreparedExec {
  spawnOpts: NormalizedSpawn;
  capture: number;
  maxBuffer: number;
  input: string | Uint8Array | undefined;
  ref: boolean;
  outputGrace: number;
  encoding: 'utf8' | 'buffer';
  all: boolean;
  reject: boolean;
  truncate: boolean;
  cmd: ResolvedCommand;
}

/** @internal Checks the options of an exec and builds its request; throws TypeError/RangeError. */
export function prepareExec(cmd: ResolvedCommand, options: ExecOptions | undefined, api: string, truncate: boolean): PreparedExec {
  let o: ExecOptions = options ?? {};
  // NAME=value words of the command string go on top of the environment.
  if (cmd.env !== undefined) o = { ...o, env: { ...o.env, ...cmd.env } };
  const spawnOpts = normalizeSpawn(cmd.file, cmd.args, o, api, execKeys);
  const maxBuffer = o.maxBuffer ?? DEFAULT_MAX_BUFFER;
  if (typeof maxBuffer !== 'number' || !(maxBuffer >= 0)) {
    throw new TypeError(`maxBuffer must be a non-negative number of bytes, got ${describe(maxBuffer)}`);
  }
  const encoding = o.encoding ?? 'utf8';
  if (encoding !== 'utf8' && encoding !== 'buffer') {
    throw new TypeError(`encoding must be 'utf8' or 'buffer', got ${describe(encoding)}`);
  }
  if (o.reject !== undefined && typeof o.reject !== 'boolean') {
    throw new TypeError(`reject must be a boolean, got ${describe(o.reject)}`);
  }
  const input = o.input;
  if (input !== undefined) {
    if (typeof input !== 'string' && !(input instanceof Uint8Array)) {
      throw new TypeError(`input must be a string or a Uint8Array, got ${describe(input)}`);
    }
    if (o.stdin !== undefined && o.stdin !== 'pipe') {
      throw new TypeError(`input needs stdin: 'pipe', got stdin: ${JSON.stringify(o.stdin)}`);
    }
  }
  // Without input, the child reads /dev/null rather than hanging on a pipe.
  if (o.stdin === undefined && input === undefined) spawnOpts.stdio[0] = NativeStdio.Ignore;

  // stdout/stderr pipes are read natively into one buffer each: no stream
  // objects, one callback when everything has ended.
  let capture = encoding === 'utf8' ? NativeCapture.AsString : 0;
  if ((spawnOpts.stdio[2] as NativeStdio) === NativeStdio.Pipe) capture |= NativeCapture.Stdout;
  if ((spawnOpts.stdio[4] as NativeStdio) === NativeStdio.Pipe) capture |= NativeCapture.Stderr;
  if (truncate) capture |= NativeCapture.Truncate;
  const all = o.all;
  if (all !== undefined && typeof all !== 'boolean') throw new TypeError(`all must be a boolean, got ${describe(all)}`);
  if (all === true) capture |= NativeCapture.All;
  if (o.ref !== undefined && typeof o.ref !== 'boolean') {
    throw new TypeError(`ref must be a boolean, got ${describe(o.ref)}`);
  }
  return {
    spawnOpts, capture, maxBuffer, input, ref: o.ref !== false, outputGrace: outputGraceMs(o.outputGrace), encoding,
    all: all === true, reject: o.reject !== false, truncate, cmd,
  };
}

/** @internal The result of a finished exec; throws ExecError for a failure unless reject is off. */
export function execResultOf(p: PreparedExec, outcome: ExecOutcome): ExecResult {
  const { status, overflowed } = outcome;
  const exceeded = overflowed === 0 ? null : overflowed & 1 ? 'stdout' : 'stderr';
  const result: ExecResult = {
    pid: status.pid, exitCode: status.exitCode, signal: status.signal, timedOut: status.timedOut,
    aborted: status.aborted, durationMs: status.durationMs, rusage: status.rusage,
    stdout: output(outcome.stdout, p.encoding),
    stderr: output(outcome.stderr, p.encoding),
    command: p.cmd.display,
    viaShell: p.cmd.viaShell,
    maxBufferExceeded: exceeded,
    outputCut: outcome.outputCut,
  };
  if (p.all) result.all = output(outcome.all, p.encoding);
  if (p.reject && !p.truncate) {
    const message = failureMessage(result, p.spawnOpts.timeout);
    if (message !== null) {
      throw new ExecError(message, { ...result, abortReason: outcome.abortReason });
    }
  }
  return result;
}

/** @internal The request as the native side takes it. */
export function inputBytes(input: string | Uint8Array | undefined): Uint8Array | null {
  return input === undefined ? null : typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
}

/**
 * @internal Shared by exec, execFile and runCheck. `truncate`: past
 * maxBuffer the output is cut and the child left running (checks), instead
 * of the child being killed (exec).
 */
export async function run(cmd: ResolvedCommand, options: ExecOptions | undefined, api: string, truncate = false): Promise<ExecResult> {
  if (cmd.list !== null) return runCommandList(cmd, cmd.list, options, api, truncate);
  const p = prepareExec(cmd, options, api, truncate);
  return execResultOf(p, await runPrepared(p));
}

/**
 * @internal An exec's options checked once for the many commands that share
 * them (a runner's checks share one options object, a plain one nothing
 * writes to): the request prepareExec makes for a stand-in command, whose
 * command part each run replaces. Options, validation and defaults are
 * prepareExec's, so a planned run is the run() it stands for.
 */
export interface ExecPlan {
  options: ExecOptions | undefined;
  api: string;
  truncate: boolean;
  /**
   * Null when a request cannot be reused: an environment made from
   * process.env (`env` merged over it, or where the addon cannot share
   * environ), read afresh at each spawn.
   */
  template: PreparedExec | null;
  /** The argv0 option as checked, or undefined (the file is argv[0]). */
  argv0: string | undefined;
}

const STAND_IN: ResolvedCommand = { file: '/', args: [], env: undefined, viaShell: false, display: '/', list: null };

/** @internal Checks `options` once (TypeError/RangeError as run() would throw them) for runPlanned. */
export function execPlan(options: ExecOptions | undefined, api: string, truncate: boolean): ExecPlan {
  const template = prepareExec(STAND_IN, options, api, truncate);
  const o = template.spawnOpts;
  const reusable = o.envp === null && o.searchPath === null;
  return { options, api, truncate, template: reusable ? template : null, argv0: options?.argv0 === undefined ? undefined : o.argv[0] };
}

/**
 * @internal run(cmd, plan.options, plan.api, plan.truncate), with the options
 * checked once: only the command is checked and put into the request. A
 * command string's pipelines and NAME=value words take run()'s own path.
 */
export async function runPlanned(cmd: ResolvedCommand, plan: ExecPlan): Promise<ExecResult> {
  const t = plan.template;
  if (t === null || cmd.list !== null || cmd.env !== undefined) return run(cmd, plan.options, plan.api, plan.truncate);
  const spawnOpts: NormalizedSpawn = { ...t.spawnOpts, file: cmd.file, argv: commandArgv(cmd.file, cmd.args, plan.argv0, plan.api) };
  const p: PreparedExec = { ...t, spawnOpts, cmd };
  return execResultOf(p, await runPrepared(p));
}

/** One command: on the executor, or on the loop where it is unavailable (or asked for). */
function runPrepared(p: PreparedExec): Promise<ExecOutcome> {
  return loopOnly || !executorAvailable()
    ? runOnLoop(p.spawnOpts, p.capture, p.maxBuffer, p.input, p.truncate, p.ref, p.outputGrace)
    : runOnExecutor(p.spawnOpts, p.capture, p.maxBuffer, p.input, p.ref, p.outputGrace);
}

/** Pipelines, lists and redirections: every stage checked before anything runs. */
async function runCommandList(
  cmd: ResolvedCommand, list: Pipeline[], options: ExecOptions | undefined, api: string, truncate: boolean,
): Promise<ExecResult> {
  const pipefail = options?.pipefail;
  if (pipefail !== undefined && typeof pipefail !== 'boolean') {
    throw new TypeError(`pipefail must be a boolean, got ${describe(pipefail)}`);
  }
  const stages = list.map((pl) => pl.stages.map((st) => {
    const hasEnv = Object.keys(st.env).length > 0;
    const one: ResolvedCommand = {
      file: st.argv[0], args: st.argv.slice(1), env: hasEnv ? st.env : undefined, viaShell: false, display: cmd.display, list: null,
    };
    const p = prepareExec(one, options, api, truncate);
    applyRedirects(p.spawnOpts, st.redirects, api);
    if (pl.stages.length > 1 && (p.spawnOpts.flags & NativeFlag.NewSession) !== 0) {
      throw new TypeError(`${api}: detached starts one command in a new session; a pipeline's stages share one process group`);
    }
    return p;
  }));
  const first = stages[0][0];
  const asGiven = { ...first, cmd, spawnOpts: { ...first.spawnOpts } };
  return execResultOf(asGiven, await runList({ list, stages, pipefail: pipefail === true }, first, runPrepared));
}
