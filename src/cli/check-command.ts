// noshell check: one check, its plugin line on stdout, its state as the exit code.
//   noshell check [options] -- <program> [args...]   an argv, never a shell
//   noshell check [options] --command '<string>'     a command string; /bin/sh only with --shell
import { formatResult } from '../check/format';
import { runCheck, type CheckResult, type CheckState } from '../check/run-check';
import type { ShellOption } from '../command/shell-option';
import { parseCommand } from '../command/parse-command';
import { quoteText } from '../util/quote-text';
import { badValue, scanOptions, UsageError, valueOf } from './cli-options';
import { parseDuration } from '../util/duration';
import { usageOf } from './help';
import { onStopSignals } from '../daemon/stop-signals';
import { normalizeCgroup, normalizeNice, parseRlimitsText, type Rlimits } from '../process/limits';

export const checkUsage = usageOf('check');

const OPTIONS = {
  timeout: 'value', 'timeout-state': 'value', shell: 'value', command: 'value', format: 'value', rlimit: 'list', nice: 'value',
  cgroup: 'value',
} as const;

interface CheckArgs {
  command: string | string[];
  timeout: number;
  timeoutState: CheckState;
  shell: ShellOption;
  format: 'text' | 'json';
  /** The plugin's limits: what a checks file's fields of the same names take. */
  limits: { rlimits?: Rlimits; nice?: number; cgroup?: string };
}

const STATE_NAMES = ['OK', 'WARNING', 'CRITICAL', 'UNKNOWN'];

function usageError(message: string): UsageError {
  return new UsageError('noshell check', message, checkUsage);
}

function bad(name: string, what: string, got: string): UsageError {
  return badValue('noshell check', checkUsage, name, what, got);
}

/** Accepts `--opt value` and `--opt=value`; what follows `--` is the argv, always. */
export function parseCheckArgs(args: string[]): CheckArgs {
  const o = scanOptions('noshell check', checkUsage, args, OPTIONS);
  if (o.positionals.length > 0) throw usageError(`unexpected argument ${quoteText(o.positionals[0])} (the program goes after --)`);
  const argv = o.rest ?? [];
  const command = valueOf(o, 'command');
  if (command !== undefined && o.rest !== null) throw usageError('--command and -- exclude each other');
  if (command === undefined && argv.length === 0) throw usageError('no command: the plugin goes after --, or as a string after --command');
  const shellText = valueOf(o, 'shell');
  if (shellText !== undefined && command === undefined) {
    throw usageError('--shell applies to --command strings; an argv after -- never goes through a shell');
  }
  let shell: ShellOption = false;
  if (shellText !== undefined) {
    if (shellText !== 'auto' && shellText !== 'true' && shellText !== 'false') throw bad('shell', 'false, auto or true', shellText);
    shell = shellText === 'auto' ? 'auto' : shellText === 'true';
  }
  if (command !== undefined) {
    const parsed = parseCommand(command);
    if (!parsed.list.some((p) => p.stages.some((st) => st.argv.length > 0))) throw bad('command', 'a command string that runs a program', command);
  }
  let timeoutState: CheckState = 3;
  const stateText = valueOf(o, 'timeout-state');
  if (stateText !== undefined) {
    const byName = STATE_NAMES.indexOf(stateText.toUpperCase());
    if (stateText.length === 1 && stateText >= '0' && stateText <= '3') timeoutState = Number(stateText) as CheckState;
    else if (byName >= 0) timeoutState = byName as CheckState;
    else throw bad('timeout-state', 'a state: 0-3, or OK, WARNING, CRITICAL or UNKNOWN', stateText);
  }
  const timeoutText = valueOf(o, 'timeout');
  let timeout = 60_000;
  if (timeoutText !== undefined) {
    if (timeoutText.trimStart().startsWith('-')) throw bad('timeout', 'a duration of 0 or more', timeoutText);
    try {
      timeout = parseDuration(timeoutText, '--timeout', 's');
    } catch {
      throw bad('timeout', 'a duration: seconds (10), or with a unit (500ms, 10s, 2m)', timeoutText);
    }
  }
  const format = valueOf(o, 'format') ?? 'text';
  if (format !== 'text' && format !== 'json') throw bad('format', 'text or json', format);
  return { command: command ?? argv, timeout, timeoutState, shell, format, limits: parseLimits(o) };
}

function parseLimits(o: ReturnType<typeof scanOptions>): CheckArgs['limits'] {
  const limits: CheckArgs['limits'] = {};
  const rlimit = valueOf(o, 'rlimit');
  if (rlimit !== undefined) {
    try {
      limits.rlimits = parseRlimitsText(rlimit);
    } catch (e) {
      throw bad('rlimit', `NAME=VALUE[,NAME=VALUE…] with VALUE a number, unlimited, SOFT:HARD or a size like 64M (${(e as Error).message})`, rlimit);
    }
  }
  const nice = valueOf(o, 'nice');
  if (nice !== undefined) {
    // Digits with an optional sign: Number() would take "0x0a" and " 1e1 ".
    const t = nice.trim();
    const n = /^[-+]?\d{1,3}$/.test(t) ? Number(t) : NaN;
    try {
      limits.nice = normalizeNice(n);
    } catch {
      throw bad('nice', 'a whole number from -20 to 19', nice);
    }
  }
  const cgroup = valueOf(o, 'cgroup');
  if (cgroup !== undefined) {
    try {
      limits.cgroup = normalizeCgroup(cgroup);
    } catch {
      throw bad('cgroup', 'the absolute path of a cgroup v2 directory', cgroup);
    }
  }
  return limits;
}

function hint(args: CheckArgs, result: CheckResult): string | null {
  if (result.spawnError === 'ESHELL') {
    return "noshell check: the command needs a shell; pass --shell auto to run it with /bin/sh, or give an argv after --";
  }
  if (result.spawnError === 'ENOENT' && Array.isArray(args.command) && args.command.length === 1 && /\s/.test(args.command[0])) {
    return `noshell check: after -- comes an argv, so ${JSON.stringify(args.command[0])} is one program name; ` +
      'for a command string use --command';
  }
  return null;
}

export async function checkCommand(args: string[], out: (s: string) => void, err: (s: string) => void = () => {}): Promise<number> {
  const parsed = parseCheckArgs(args);
  // SIGINT/SIGTERM/SIGHUP would kill only us: the plugin leads its own
  // process group (no Ctrl-C from the terminal reaches it) and would run on.
  // Aborting kills the group (SIGTERM, SIGKILL 2 s later) and waits for it.
  const ac = new AbortController();
  const stop = onStopSignals((sig) => ac.abort(new Error(`noshell check: ${sig}`)));
  let result: CheckResult | undefined;
  try {
    // The plugin's stdin is /dev/null (runCheck never passes ours on): a
    // plugin in a background group reading the terminal would stop on SIGTTIN.
    // cleanup: a SIGKILL of ours takes the plugin with it.
    result = await runCheck(parsed.command, {
      timeout: parsed.timeout, timeoutState: parsed.timeoutState, shell: parsed.shell, signal: ac.signal, cleanup: true,
      ...parsed.limits,
    });
  } catch (e) {
    // An abort before the spawn is thrown rather than reported.
    if (stop.caught === null) throw e;
  } finally {
    stop.remove();
  }
  if (stop.caught !== null) {
    const plugin = result?.signal ? ` (plugin ended by ${result.signal})` : '';
    out(`UNKNOWN - noshell check: stopped by ${stop.caught}${plugin}\n`);
    return 3;
  }
  const line = hint(parsed, result!);
  if (line !== null) err(`${line}\n`);
  const r = result!;
  // text: the plugin's stdout as it wrote it (Nagios passes it on unchanged);
  // json: the parsed result, perfdata as numbers, and that text too.
  if (parsed.format === 'json') {
    out(`${JSON.stringify({
      state: r.state, stateName: r.stateName, output: r.output, longOutput: r.longOutput, perfdata: r.perfdata,
      perfdataErrors: r.perfdataErrors, exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut,
      truncated: r.truncated, outputCut: r.outputCut, durationMs: Number(r.durationMs.toFixed(3)), command: r.command, viaShell: r.viaShell,
      spawnError: r.spawnError, stdout: r.stdout, stderr: r.stderr,
    })}\n`);
  } else {
    out(`${formatResult(r)}\n`);
  }
  return r.state;
}
