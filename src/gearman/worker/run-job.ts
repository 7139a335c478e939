// Runs one job's command line through noshell's spawn path and turns what
// happened into the output and return code the C mod_gearman_worker sends.
//
// This uses the buffered runner under runCheck rather than runCheck itself:
// the C worker sends the plugin's stdout byte for byte (escaped), and
// runCheck hands back parsed, trimmed output. Command resolution is the same
// (`shell: 'auto'`: /bin/sh -c only when parseCommand says a shell is needed).
import { constants } from 'node:os';
import { resolveCommand, type ResolvedCommand } from '../../command/shell-option';
import { SpawnError } from '../../process/errors';
import { execPlan, run, runPlanned, type ExecOptions, type ExecPlan } from '../../process/exec';
import type { ResourceUsage } from '../../process/status';
import { LruMap } from '../../util/lru-map';
import { escapeOutput, type CheckJob } from '../payload/job-payload';

export interface JobSettings {
  identifier: string;
  /** Seconds, used when the job has none (default 60). */
  defaultTimeout: number;
  /** return_code of a timed-out check (default 2). */
  timeoutReturn: number;
  showErrorOutput: boolean;
  /** Cap on captured stdout/stderr bytes (the C worker's 10 MB). */
  maxOutput: number;
  signal?: AbortSignal;
  /** Checked exec options kept from job to job (see JobPlans); without it each job checks its own. */
  plans?: JobPlans | undefined;
}

/** Timeouts whose checked options a JobPlans keeps: job payloads choose them, so they are bounded. */
const PLANS = 64;

/**
 * The exec options of a worker's jobs, checked once: they differ only in the
 * job's timeout (the core sends one or two). Kept for the last 64 timeouts
 * used, the one used longest ago going first; a change of maxOutput or
 * signal starts over.
 */
export class JobPlans {
  private readonly byTimeout = new LruMap<number, ExecPlan>(PLANS);
  private maxOutput = -1;
  private signal: AbortSignal | undefined;

  /** The plan for these settings; throws as run() would for options it refuses. */
  get(timeoutMs: number, s: JobSettings): ExecPlan {
    if (s.maxOutput !== this.maxOutput || s.signal !== this.signal) {
      this.byTimeout.clear();
      this.maxOutput = s.maxOutput;
      this.signal = s.signal;
    }
    return this.byTimeout.get(timeoutMs, () => execPlan(jobExecOptions(timeoutMs, s, undefined), 'gearman-worker', true));
  }
}

function jobExecOptions(timeoutMs: number, s: JobSettings, env: Record<string, string> | undefined): ExecOptions {
  return {
    timeout: timeoutMs, killSignal: 'SIGTERM', forceKillAfter: 1000, maxBuffer: s.maxOutput,
    encoding: 'utf8', reject: false, signal: s.signal,
    // Plugins die with the worker, SIGKILL and OOM kill included.
    cleanup: true,
    // An env option costs a merged environment per spawn: only notifications need one.
    ...(env !== undefined ? { env } : {}),
  };
}

export interface JobOutcome {
  returnCode: number;
  /** Escaped, ready for `output=`. */
  output: string;
  startTime: number;
  finishTime: number;
  timedOut: boolean;
  aborted: boolean;
  viaShell: boolean;
  rusage: ResourceUsage;
  /** Set when the plugin could not be started. */
  spawnError: string | null;
}

/** C isspace() in the "C" locale: space, \t \n \v \f \r. */
function isCSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

/**
 * Leading and trailing C white space cut, by two scans from the ends.
 * A regular expression for the trailing part was quadratic: 'x', 200,000
 * spaces, 'x' on a plugin's stderr froze the worker for 15.6 s (issue 17).
 */
export function trimCSpace(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isCSpace(s.charCodeAt(start))) start++;
  while (end > start && isCSpace(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

function cString(s: string): string {
  const nul = s.indexOf('\0');
  return nul < 0 ? s : s.slice(0, nul);
}

// The C worker's signal names for 1..16, "signal N" for the rest.
const C_SIGNALS = ['', 'SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGILL', 'SIGTRAP', 'SIGABRT', 'SIGBUS', 'SIGFPE', 'SIGKILL',
  'SIGUSR1', 'SIGSEGV', 'SIGUSR2', 'SIGPIPE', 'SIGALRM', 'SIGTERM', 'SIGURG'];

function signalName(n: number): string {
  return C_SIGNALS[n] ?? `signal ${n}`;
}

/** The C worker's handling of exit codes outside 0..3 (output already escaped). */
export function classifyExit(code: number, output: string, identifier: string): { returnCode: number; output: string } {
  if (code === 126) {
    return { returnCode: 2, output: `CRITICAL: Return code of 126 is out of bounds. Make sure the plugin you're trying to run is executable. (worker: ${identifier})` };
  }
  if (code === 127) {
    return { returnCode: 2, output: `CRITICAL: Return code of 127 is out of bounds. Make sure the plugin you're trying to run actually exists. (worker: ${identifier})` };
  }
  if (code >= 128 && code < 144) {
    return { returnCode: 2, output: `CRITICAL: Return code of ${code} is out of bounds. Plugin exited by signal ${signalName(code - 128)}. (worker: ${identifier})\\n${output}` };
  }
  if (code > 3) {
    // Quirk kept: exit 25 is reported as 25 (the C worker's workaround_rc_25 logic).
    return { returnCode: code === 25 ? 25 : 2, output: `CRITICAL: Return code of ${code} is out of bounds. (worker: ${identifier})\\n${output}` };
  }
  return { returnCode: code, output };
}

/** The C worker's rule: execvp only for commands starting with / or . without any of its shell characters. */
export function cWouldUseShell(command: string): boolean {
  return !(command.startsWith('/') || command.startsWith('.')) || /[!$^&*()~[\]\\|{};<>?`"']/.test(command);
}

export function timeoutText(type: string | undefined, identifier: string): string {
  return type === 'service'
    ? `(Service Check Timed Out On Worker: ${identifier})`
    : `(Host Check Timed Out On Worker: ${identifier})`;
}

/** Largest delay a Node timer takes (2^31-1 ms, ~24.8 days); longer ones throw a RangeError. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The kernel's limit on one argument (MAX_ARG_STRLEN, 32 pages): a longer
 * command line cannot run through `/bin/sh -c`, as the C worker runs most.
 */
export const MAX_COMMAND_LINE = 128 * 1024 - 1;

export async function runJob(job: CheckJob, s: JobSettings): Promise<JobOutcome> {
  const timeoutSec = job.timeout > 0 ? job.timeout : s.defaultTimeout;
  // The C worker arms alarm(timeout) for any int; a JS timer tops out at
  // ~24.8 days, so a longer timeout is clamped to that (still a timeout,
  // just shortened to the largest one a timer can hold).
  const timeoutMs = Math.min(timeoutSec * 1000, MAX_TIMER_MS);
  const startTime = Date.now() / 1000;
  const env: Record<string, string> = {};
  // Notifications read the core's output from the environment.
  if (job.type === 'notification') {
    const which = job.serviceDescription !== undefined ? 'SERVICE' : 'HOST';
    if (job.pluginOutput !== undefined) env[`NAGIOS_${which}OUTPUT`] = job.pluginOutput;
    if (job.longPluginOutput !== undefined) env[`NAGIOS_LONG${which}OUTPUT`] = job.longPluginOutput;
  }
  let cmd: ResolvedCommand;
  let code: number;
  let stdout = '';
  let stderr = '';
  let timedOut = false;
  let aborted = false;
  let spawnError: string | null = null;
  let rusage: ResourceUsage = { userCpuMs: 0, systemCpuMs: 0, maxRssKb: 0 };
  const commandLine = job.commandLine ?? '';
  if (commandLine.length > MAX_COMMAND_LINE) {
    // Parsed and marshalled, 16 MiB of `a a a …` blocked the worker for
    // seconds and took ~1 GB on its way to E2BIG (issue 17). No longer
    // command line can be run: through /bin/sh it is one argument.
    return {
      returnCode: 3, startTime, finishTime: Date.now() / 1000, timedOut: false, aborted: false, viaShell: false, rusage, spawnError: 'E2BIG',
      output: escapeOutput(`UNKNOWN: command line of ${commandLine.length} characters is longer than one argument may be ` +
        `(${MAX_COMMAND_LINE} bytes); not run (worker: ${s.identifier})`),
    };
  }
  try {
    cmd = resolveCommand(commandLine, 'auto', 'gearman-worker');
  } catch (err) {
    // A blank command: like /bin/sh -c '' it runs nothing; report it as an unstartable plugin.
    return {
      returnCode: 3, output: escapeOutput(`(noshell worker ${s.identifier}: ${(err as Error).message})`), startTime,
      finishTime: Date.now() / 1000, timedOut: false, aborted: false, viaShell: false, rusage, spawnError: 'EINVAL',
    };
  }
  try {
    const jobEnv = Object.keys(env).length > 0 ? env : undefined;
    const res = jobEnv === undefined && s.plans !== undefined
      ? await runPlanned(cmd, s.plans.get(timeoutMs, s))
      : await run(cmd, jobExecOptions(timeoutMs, s, jobEnv), 'gearman-worker', true);
    stdout = res.stdout as string;
    stderr = res.stderr as string;
    timedOut = res.timedOut;
    aborted = res.aborted;
    rusage = res.rusage;
    const signo = res.signal !== null ? (constants.signals as Record<string, number>)[res.signal] ?? 0 : 0;
    code = res.exitCode ?? (signo > 0 ? 128 + signo : 3);
  } catch (err) {
    if (!(err instanceof SpawnError)) throw err;
    // What execvp in the C worker's child turns into an exit status.
    spawnError = err.code;
    code = err.code === 'ENOENT' ? 127 : err.code === 'EACCES' ? 126 : 3;
    // EMFILE, EAGAIN, ENOMEM…: the C worker's fork() would have failed and
    // said so; an UNKNOWN with empty output tells the operator nothing.
    if (code === 3) stdout = `UNKNOWN: cannot start the plugin: ${err.message} (worker: ${s.identifier})`;
    // Where the C worker would have gone through /bin/sh, dash said why on
    // stderr and that text reached the result; keep the result the same.
    if (code !== 3 && cWouldUseShell(job.commandLine ?? '')) {
      stderr = `sh: 1: ${cmd.file}: ${code === 127 ? 'not found' : 'Permission denied'}`;
    }
  }
  const finishTime = Date.now() / 1000;
  let output = escapeOutput(cString(stdout));
  let returnCode: number;
  ({ returnCode, output } = classifyExit(code, output, s.identifier));
  // The C worker also calls a check that ran past its timeout a timeout.
  if (timedOut || Math.trunc(finishTime) - Math.trunc(startTime) > timeoutSec) {
    timedOut = true;
    returnCode = s.timeoutReturn;
    output = timeoutText(job.type, s.identifier);
  } else {
    const err = escapeOutput(trimCSpace(cString(stderr)));
    if (s.showErrorOutput && err !== '') output += `${output !== '' ? '\\n' : ''}[${err}] `;
  }
  return { returnCode, output, startTime, finishTime, timedOut, aborted, viaShell: cmd.viaShell, rusage, spawnError };
}
