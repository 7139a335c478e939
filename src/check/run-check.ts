// runCheck: run one Nagios/monitoring-plugins check and turn whatever
// happened into a CheckResult. It never rejects for anything the check did.
import { parseDuration, type Duration } from '../util/duration';
import { checkShellOption, resolveCommand, type ResolvedCommand, type ShellOption } from '../command/shell-option';
import { execPlan, run, runPlanned, type ExecOptions, type ExecPlan, type ExecResult } from '../process/exec';
import { ShellSyntaxError, SpawnError } from '../process/errors';
import type { SpawnOptions } from '../process/options';
import type { ResourceUsage } from '../process/status';
import { describe } from '../util/validate';
import type { PerfDatum } from './plugin/perfdata';
import { NO_ERRORS, parsePluginOutput } from './plugin/plugin-output';

export type CheckState = 0 | 1 | 2 | 3;
export type StateName = 'OK' | 'WARNING' | 'CRITICAL' | 'UNKNOWN';
export const STATE_NAMES: readonly StateName[] = ['OK', 'WARNING', 'CRITICAL', 'UNKNOWN'];

export interface CheckOptions extends Omit<SpawnOptions, 'stdin' | 'stdout' | 'stderr'> {
  /** ms or "60s" (default 60 s, like Nagios' service_check_timeout); then the group is killed. */
  timeout?: Duration | undefined;
  /** State of a timed-out check (default 3 UNKNOWN; 2 CRITICAL for Nagios-like setups). */
  timeoutState?: CheckState | undefined;
  /** Bytes kept of stdout and of stderr (default 64 KiB); the rest is dropped, the check not failed. */
  maxOutput?: number | undefined;
  /** Default 'auto': /bin/sh -c only for command strings that need it. */
  shell?: ShellOption | undefined;
  /** After the plugin has exited, how long its output is still read while a background process it
   * left holds it open (ms or "1s"; default 100 ms; Infinity: to its end). */
  outputGrace?: Duration | undefined;
}

export interface CheckResult {
  state: CheckState;
  stateName: StateName;
  /** The status text (first line), or what noshell says happened. */
  output: string;
  longOutput: string;
  perfdata: PerfDatum[];
  /** Perfdata items skipped or fields ignored, and why. */
  perfdataErrors: string[];
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Output was longer than maxOutput and was cut. */
  truncated: boolean;
  /** The plugin had exited and a process it left behind still held its output open at the end of
   * outputGrace: the state is the plugin's; what that process wrote later is not here. */
  outputCut: boolean;
  durationMs: number;
  rusage: ResourceUsage;
  /** What the plugin wrote on stdout (up to maxOutput), byte for byte: `noshell check` passes it through. */
  stdout: string;
  stderr: string;
  command: string;
  viaShell: boolean;
  /** Set when the plugin could not be started ('ENOENT', 'EACCES', …) or needed a shell it was not given. */
  spawnError: string | null;
}

const DEFAULT_TIMEOUT = 60_000;
const DEFAULT_MAX_OUTPUT = 64 * 1024;
const DEFAULT_GRACE = 2_000;

function seconds(ms: number): string {
  return Number((ms / 1000).toFixed(3)).toString();
}

function firstLine(text: string, max = 256): string {
  const line = text.trim().split('\n', 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

function base(cmd: ResolvedCommand | null, command: string): Omit<CheckResult, 'state' | 'stateName' | 'output'> {
  return {
    longOutput: '', perfdata: [], perfdataErrors: NO_ERRORS, exitCode: null, signal: null, timedOut: false, truncated: false,
    outputCut: false,
    durationMs: 0, rusage: { userCpuMs: 0, systemCpuMs: 0, maxRssKb: 0 }, stdout: '', stderr: '',
    command: cmd?.display ?? command, viaShell: cmd?.viaShell ?? false, spawnError: null,
  };
}

function unknown(rest: Omit<CheckResult, 'state' | 'stateName' | 'output'>, output: string): CheckResult {
  return { ...rest, state: 3, stateName: 'UNKNOWN', output };
}

function classify(res: ExecResult, cmd: ResolvedCommand, timeout: number, timeoutState: CheckState): CheckResult {
  const stdout = res.stdout as string;
  const stderr = res.stderr as string;
  const parsed = parsePluginOutput(stdout);
  const plugin = cmd.viaShell ? cmd.display : cmd.file;
  const said = parsed.output !== '' ? `: ${parsed.output}` : stderr.trim() !== '' ? `: ${firstLine(stderr)}` : '';
  let state: CheckState;
  let output: string;
  if (res.timedOut) {
    state = timeoutState;
    output = `Check timed out after ${seconds(timeout)} s`;
  } else if (res.aborted) {
    state = 3;
    output = `Check was aborted${said}`;
  } else if (res.signal !== null) {
    state = 3;
    output = `Plugin ${plugin} was killed by ${res.signal}${said}`;
  } else if (res.exitCode !== null && res.exitCode >= 0 && res.exitCode <= 3) {
    state = res.exitCode as CheckState;
    output = parsed.output !== ''
      ? parsed.output
      : `(No output on stdout)${stderr.trim() !== '' ? ` stderr: ${firstLine(stderr)}` : ''}`;
  } else if (res.exitCode === 126) {
    state = 3;
    output = `Plugin ${plugin} is not executable (exit 126)${said}`;
  } else if (res.exitCode === 127) {
    state = 3;
    output = `Plugin ${plugin} was not found (exit 127)${said}`;
  } else {
    state = 3;
    output = res.exitCode === null
      ? `Plugin ${plugin} exit status was lost`
      : `Plugin ${plugin} exited with out-of-range code ${res.exitCode}${said}`;
  }
  return {
    longOutput: parsed.longOutput, perfdata: parsed.perfdata, perfdataErrors: parsed.perfdataErrors,
    exitCode: res.exitCode, signal: res.signal, timedOut: res.timedOut, truncated: res.maxBufferExceeded !== null,
    outputCut: res.outputCut,
    durationMs: res.durationMs, rusage: res.rusage, stdout, stderr, command: cmd.display, viaShell: cmd.viaShell,
    spawnError: null, state, stateName: STATE_NAMES[state], output,
  };
}

/**
 * @internal runCheck's options, checked: what runs of many checks that share
 * one options object (CheckRunner's) take instead of checking them each run.
 */
export interface CheckPlan {
  timeout: number;
  timeoutState: CheckState;
  shell: ShellOption;
  /** What run() gets. */
  execOptions: ExecOptions;
  /** Spawn options checked once too (execPlan), or null: run() checks them each run. */
  exec: ExecPlan | null;
}

/** @internal runCheck's own checks of its options (TypeError); the spawn options are run()'s or execPlan's to check. */
export function checkPlan(options: CheckOptions | undefined): CheckPlan {
  const o: CheckOptions = options ?? {};
  if (typeof o !== 'object' || o === null || Array.isArray(o)) {
    throw new TypeError(`runCheck: options must be an object, got ${describe(options)}`);
  }
  const timeoutState = o.timeoutState ?? 3;
  if (timeoutState !== 0 && timeoutState !== 1 && timeoutState !== 2 && timeoutState !== 3) {
    throw new TypeError(`runCheck: timeoutState must be 0, 1, 2 or 3, got ${describe(timeoutState)}`);
  }
  const maxOutput = o.maxOutput ?? DEFAULT_MAX_OUTPUT;
  if (typeof maxOutput !== 'number' || !(maxOutput >= 0)) {
    throw new TypeError(`runCheck: maxOutput must be a non-negative number of bytes, got ${describe(maxOutput)}`);
  }
  const shell = checkShellOption(o.shell ?? 'auto', 'runCheck');
  // A string with a unit ("10s") as checks files take it; numbers are validated with the spawn options.
  const timeout = typeof o.timeout === 'string' ? parseDuration(o.timeout, 'runCheck: timeout') : o.timeout ?? DEFAULT_TIMEOUT;
  // The rest are spawn options; normalizeSpawn rejects unknown ones.
  const { timeoutState: _ts, maxOutput: _mo, shell: _sh, ...spawnOptions } = o;
  for (const key of Object.keys(o)) {
    if (key === 'stdin' || key === 'stdout' || key === 'stderr' || key === 'input') {
      throw new TypeError(`runCheck: unknown option ${JSON.stringify(key)}`);
    }
  }
  const execOptions: ExecOptions = {
    ...spawnOptions,
    // After the spread: a caller's forceKillAfter: undefined means this default (issue 17).
    forceKillAfter: o.forceKillAfter ?? DEFAULT_GRACE,
    timeout,
    maxBuffer: maxOutput,
    encoding: 'utf8',
    reject: false,
  };
  return { timeout, timeoutState, shell, execOptions, exec: null };
}

/**
 * @internal checkPlan() with the spawn options checked too, for a runner's
 * checks; null when they fail their checks (runCheck then says why, as it
 * always has, on each run).
 */
export function sharedCheckPlan(options: CheckOptions | undefined): CheckPlan | null {
  try {
    const plan = checkPlan(options);
    plan.exec = execPlan(plan.execOptions, 'runCheck', true);
    return plan;
  } catch {
    return null;
  }
}

/** Runs a check; every outcome (also spawn errors and timeouts) is a CheckResult. */
export async function runCheck(command: string | readonly string[], options?: CheckOptions): Promise<CheckResult> {
  return runPlannedCheck(command, checkPlan(options));
}

/** @internal runCheck with its options checked already. */
export async function runPlannedCheck(command: string | readonly string[], plan: CheckPlan): Promise<CheckResult> {
  let cmd: ResolvedCommand;
  try {
    cmd = resolveCommand(command, plan.shell, 'runCheck');
  } catch (err) {
    if (err instanceof ShellSyntaxError) {
      return { ...unknown(base(null, err.command), `Check command needs a shell (${err.reasons.join(', ')}) and shell is false`), spawnError: 'ESHELL' };
    }
    throw err;
  }
  const started = performance.now();
  try {
    const res = plan.exec !== null ? await runPlanned(cmd, plan.exec) : await run(cmd, plan.execOptions, 'runCheck', true);
    return classify(res, cmd, plan.timeout, plan.timeoutState);
  } catch (err) {
    if (err instanceof SpawnError) {
      const plugin = cmd.viaShell ? '/bin/sh' : cmd.file;
      return {
        ...unknown({ ...base(cmd, ''), durationMs: performance.now() - started }, `Could not run plugin ${plugin}: ${err.code} (${err.message})`),
        spawnError: err.code,
      };
    }
    throw err;
  }
}
