// Turns what exec/popen/runCheck are given (a command string or an argv
// array) into what to spawn, under the `shell` option. A string runs without
// a shell whenever parseCommand can say exactly what /bin/sh would run.
import { ShellSyntaxError } from './shell-syntax-error';
import { describe } from '../util/validate';
import { parseCommand } from './parse-command';

/** false: never a shell (strings that need one throw ShellSyntaxError);
 * 'auto': /bin/sh -c only when the string needs it; true: always /bin/sh -c. */
export type ShellOption = boolean | 'auto';

export interface ResolvedCommand {
  file: string;
  args: string[];
  /** Leading NAME=value words of the string, for the child's environment. */
  env: Record<string, string> | undefined;
  viaShell: boolean;
  /** The command as given, for messages and results. */
  display: string;
}

// `--`: a command string starting with - or + must not be taken for options.
const SH = '/bin/sh';

export function checkShellOption(value: unknown, api: string): ShellOption {
  if (value === undefined) return false;
  if (value === true || value === false || value === 'auto') return value;
  throw new TypeError(`${api}: shell must be false, 'auto' or true, got ${describe(value)}`);
}

export function quoteArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function resolveCommand(command: unknown, shell: ShellOption, api: string): ResolvedCommand {
  if (Array.isArray(command)) {
    // An argv array never goes through a shell, whatever `shell` says.
    if (command.length === 0) throw new TypeError(`${api}: the argv array must not be empty`);
    const [file, ...args] = command as string[];
    return { file, args, env: undefined, viaShell: false, display: command.map((a) => quoteArg(String(a))).join(' ') };
  }
  if (typeof command !== 'string') {
    throw new TypeError(`${api}: command must be a string or an argv array, got ${describe(command)}`);
  }
  const parsed = parseCommand(command);
  // Blank or assignments only: /bin/sh would "succeed" at running nothing,
  // which turns a misconfigured check green. That is bad input, shell or not.
  if (parsed.reasons.includes('empty command')) {
    throw new TypeError(`${api}: the command runs no program: ${JSON.stringify(command)}`);
  }
  if (shell === true) return { file: SH, args: ['-c', '--', command], env: undefined, viaShell: true, display: command };
  if (parsed.needsShell) {
    if (shell === 'auto') return { file: SH, args: ['-c', '--', command], env: undefined, viaShell: true, display: command };
    throw new ShellSyntaxError(command, parsed.reasons);
  }
  const hasEnv = Object.keys(parsed.env).length > 0;
  return { file: parsed.argv[0], args: parsed.argv.slice(1), env: hasEnv ? parsed.env : undefined, viaShell: false, display: command };
}
