// Turns what exec/popen/runCheck are given (a command string or an argv
// array) into what to spawn, under the `shell` option. A string runs without
// a shell whenever parseCommand can say exactly what /bin/sh would run.
import { ShellSyntaxError } from './shell-syntax-error';
import { describe } from '../util/validate';
import { parseCommand } from './parse-command';
import type { Pipeline, Redirect } from './command-list';
import { isArgvArray, isPlainObject, listInput, pipelineInput } from './command-input';

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
  /**
   * Pipelines, lists or redirections run without a shell (file, args and env
   * are then the first command's); null for one plain command.
   */
  list: Pipeline[] | null;
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

function redirectText(r: Redirect): string {
  const dup = r.op === '<&' || r.op === '>&';
  const fd = r.fd === (r.op[0] === '<' ? 0 : 1) ? '' : String(r.fd);
  return `${fd}${r.op}${dup ? r.target : ` ${quoteArg(r.target)}`}`;
}

/** A structured command written the way the shell would read it back. */
export function displayList(list: readonly Pipeline[]): string {
  let out = '';
  for (const p of list) {
    if (out !== '') out += p.op === ';' ? '; ' : ` ${p.op} `;
    out += p.stages.map((st) => [
      ...Object.entries(st.env).map(([k, v]) => `${k}=${quoteArg(v)}`),
      ...st.argv.map(quoteArg),
      ...st.redirects.map(redirectText),
    ].join(' ')).join(' | ');
  }
  return out;
}

/** The text of each redirection of a stage, for messages. */
export function redirectTexts(redirects: readonly Redirect[]): string[] {
  return redirects.map(redirectText);
}

/** Why a pipeline, list or redirection is refused where only one command runs. */
function structureReasons(list: readonly Pipeline[]): string[] {
  const reasons: string[] = [];
  if (list.some((p) => p.stages.length > 1)) reasons.push('pipe');
  if (list.some((p) => p.stages.some((st) => st.redirects.length > 0))) reasons.push('redirection');
  if (list.length > 1) reasons.push('command list');
  return reasons;
}

/** What a caller runs itself: 'all' (exec, popen and what uses them), or 'one' command with its redirections (execSync). */
export type Runs = 'all' | 'one';

function runsIt(list: readonly Pipeline[], runs: Runs): boolean {
  return runs === 'all' || (list.length === 1 && list[0].stages.length === 1);
}

function fromList(list: Pipeline[], display: string, runs: Runs, api: string): ResolvedCommand {
  const first = list[0].stages[0];
  const simple = list.length === 1 && list[0].stages.length === 1 && first.redirects.length === 0;
  if (!runsIt(list, runs)) {
    throw new TypeError(`${api} runs one command: a ${structureReasons(list).join(', ')} needs exec()`);
  }
  const hasEnv = Object.keys(first.env).length > 0;
  return {
    file: first.argv[0], args: first.argv.slice(1), env: hasEnv ? first.env : undefined, viaShell: false, display,
    list: simple ? null : list,
  };
}

/**
 * `runs`: what the caller runs itself (see Runs); a string with more goes
 * to /bin/sh under shell 'auto' (else ShellSyntaxError), and structure
 * with more is a TypeError.
 */
export function resolveCommand(command: unknown, shell: ShellOption, api: string, runs: Runs = 'all'): ResolvedCommand {
  if (Array.isArray(command)) {
    // An argv array never goes through a shell, whatever `shell` says.
    if (command.length === 0) throw new TypeError(`${api}: the argv array must not be empty`);
    if (!isArgvArray(command)) {
      const list = pipelineInput(command, api);
      return fromList(list, displayList(list), runs, api);
    }
    const [file, ...args] = command as string[];
    return { file, args, env: undefined, viaShell: false, display: command.map((a) => quoteArg(String(a))).join(' '), list: null };
  }
  if (isPlainObject(command) && 'list' in command) {
    const list = listInput(command, api);
    return fromList(list, displayList(list), runs, api);
  }
  if (typeof command !== 'string') {
    throw new TypeError(`${api}: command must be a string, an argv array, a pipeline or a list, got ${describe(command)}`);
  }
  const parsed = parseCommand(command);
  // Blank or assignments only: /bin/sh would "succeed" at running nothing,
  // which turns a misconfigured check green. That is bad input, shell or not.
  if (parsed.reasons.includes('empty command') && !parsed.list.some((p) => p.stages.some((st) => st.argv.length > 0))) {
    throw new TypeError(`${api}: the command runs no program: ${JSON.stringify(command)}`);
  }
  const viaShell: ResolvedCommand = { file: SH, args: ['-c', '--', command], env: undefined, viaShell: true, display: command, list: null };
  if (shell === true) return viaShell;
  const reasons = parsed.needsShell ? parsed.reasons : !runsIt(parsed.list, runs) ? structureReasons(parsed.list) : [];
  if (reasons.length > 0) {
    if (shell === 'auto') return viaShell;
    throw new ShellSyntaxError(command, reasons);
  }
  return fromList(parsed.list, command, runs, api);
}
