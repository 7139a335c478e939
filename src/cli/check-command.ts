// noshell check: one check, its plugin line on stdout, its state as the exit code.
//   noshell check [options] -- <program> [args...]   an argv, never a shell
//   noshell check [options] --command '<string>'     a command string; /bin/sh only with --shell
import { parseArgs } from 'node:util';
import { formatResult } from '../check/format';
import { runCheck, type CheckResult, type CheckState } from '../check/run-check';
import type { ShellOption } from '../command/shell-option';
import { parseDuration } from './duration';
import { usageOf } from './help';
import { onStopSignals } from './stop-signals';

export const checkUsage = usageOf('check');

const options = {
  timeout: { type: 'string' },
  'timeout-state': { type: 'string' },
  shell: { type: 'string' },
  command: { type: 'string' },
  format: { type: 'string' },
} as const;

interface CheckArgs {
  command: string | string[];
  timeout: number;
  timeoutState: CheckState;
  shell: ShellOption;
  format: 'text' | 'json';
}

function usageError(message: string): TypeError {
  return new TypeError(`noshell check: ${message}\nusage: ${checkUsage}`);
}

/** Accepts `--opt value` and `--opt=value`; what follows `--` is the argv, always. */
export function parseCheckArgs(args: string[]): CheckArgs {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true, tokens: true });
  } catch (err) {
    throw usageError((err as Error).message);
  }
  const { values, tokens } = parsed;
  const terminator = tokens.findIndex((t) => t.kind === 'option-terminator');
  const stray = tokens.find((t, i) => t.kind === 'positional' && (terminator < 0 || i < terminator));
  if (stray !== undefined && stray.kind === 'positional') {
    throw usageError(`unexpected argument ${JSON.stringify(stray.value)} (the program goes after --)`);
  }
  const argv = terminator < 0 ? [] : parsed.positionals;
  if (values.command !== undefined && terminator >= 0) throw usageError('--command and -- exclude each other');
  if (values.command === undefined && argv.length === 0) throw usageError('no command');
  if (values.shell !== undefined && values.command === undefined) {
    throw usageError('--shell applies to --command strings; an argv after -- never goes through a shell');
  }

  let timeoutState: CheckState = 3;
  if (values['timeout-state'] !== undefined) {
    if (!/^[0-3]$/.test(values['timeout-state'])) throw usageError(`bad --timeout-state ${values['timeout-state']}`);
    timeoutState = Number(values['timeout-state']) as CheckState;
  }
  let shell: ShellOption = false;
  if (values.shell !== undefined) {
    if (!['auto', 'true', 'false'].includes(values.shell)) throw usageError(`bad --shell ${values.shell}`);
    shell = values.shell === 'auto' ? 'auto' : values.shell === 'true';
  }
  const timeout = values.timeout === undefined ? 60_000 : parseDuration(values.timeout, '--timeout', 's');
  const format = values.format ?? 'text';
  if (format !== 'text' && format !== 'json') throw usageError(`bad --format ${format} (text or json)`);
  return { command: values.command ?? argv, timeout, timeoutState, shell, format };
}

/** Why it went wrong, for a person at a terminal (stderr); null if nothing to add. */
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
    result = await runCheck(parsed.command, {
      timeout: parsed.timeout, timeoutState: parsed.timeoutState, shell: parsed.shell, signal: ac.signal,
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
      truncated: r.truncated, durationMs: Number(r.durationMs.toFixed(3)), command: r.command, viaShell: r.viaShell,
      spawnError: r.spawnError, stdout: r.stdout, stderr: r.stderr,
    })}\n`);
  } else {
    out(`${formatResult(r)}\n`);
  }
  return r.state;
}
