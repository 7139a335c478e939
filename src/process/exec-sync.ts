// execFileSync / execSync: exec and execFile run to their end on the calling
// thread, with the same options, results and errors. Nothing else on the
// event loop runs meanwhile, by design: for scripts and start-up code, never
// for a daemon's work. The child is started the fork-free way and its output
// read, its timeout enforced and its status reaped on this thread, by the
// executor's own code (native/executor: noshell_run_sync).
import { binding, ExecField } from '../binding/binding';
import { checkShellOption, quoteArg, resolveCommand, type ResolvedCommand } from '../command/shell-option';
import { spawnErrorOf } from './errors';
import { execResultOf, inputBytes, prepareExec, type ExecOptions, type ExecResult } from './exec';
import { outcomeOf } from './executor';
import { traceExit, traceStart } from './diagnostics';
import { describe } from './options';
import { applyRedirects } from './redirects';
import type { CommandInput } from '../command/command-list';

/** What the async calls take, less what a call that blocks cannot use: `signal` and `ref`. */
export type ExecSyncOptions = Omit<ExecOptions, 'signal' | 'ref'>;
export type ExecSyncOptionsUtf8 = ExecSyncOptions & { encoding?: 'utf8' | undefined };
export type ExecSyncOptionsBuffer = ExecSyncOptions & { encoding: 'buffer' };

function runSync(cmd: ResolvedCommand, options: ExecSyncOptions | undefined, api: string): ExecResult {
  for (const key of ['signal', 'ref'] as const) {
    if (options !== undefined && options !== null && (options as ExecOptions)[key] !== undefined) {
      throw new TypeError(`${api}: ${key} does not apply to a call that blocks until the child is done`);
    }
  }
  const p = prepareExec(cmd, options, api, false);
  const o = p.spawnOpts;
  if (cmd.list !== null) applyRedirects(o, cmd.list[0].stages[0].redirects, api);
  const traced = traceStart(o, 'sync', null);
  const r = binding.execSync(
    o.file, o.argv, o.envp, o.searchPath, o.cwd, o.stdio, o.flags, o.uid, o.gid, o.method, o.groups,
    p.capture, p.maxBuffer, inputBytes(p.input), o.timeout, o.killSignal, o.forceKillAfter, o.processGroup, false,
    o.setup, o.cgroup, p.outputGrace, o.redirects,
  );
  if (typeof r === 'number') {
    const error = spawnErrorOf(o, -r, 'stdio');
    traceExit(traced, null, error);
    throw error;
  }
  const [numbers, outputs] = r;
  const errno = numbers[1];
  if (errno !== 0) {
    const error = spawnErrorOf(o, errno, binding.steps[numbers[ExecField.Step]] ?? 'spawn', numbers[ExecField.Redirect]);
    traceExit(traced, null, error);
    throw error;
  }
  const outcome = outcomeOf(numbers, outputs, 0, false, undefined);
  traceExit(traced, outcome.status);
  return execResultOf(p, outcome);
}

/**
 * execFile on this thread: runs `file` with `args` (never a shell) and
 * returns when it is done, blocking the event loop meanwhile. Throws what
 * execFile rejects with: TypeError, SpawnError, ExecError.
 */
export function execFileSync(file: string, args?: readonly string[], options?: ExecSyncOptionsUtf8): ExecResult<string>;
export function execFileSync(file: string, args: readonly string[] | undefined, options: ExecSyncOptionsBuffer): ExecResult<Buffer>;
export function execFileSync(file: string, args?: readonly string[], options?: ExecSyncOptions): ExecResult;
export function execFileSync(file: string, args?: readonly string[], options?: ExecSyncOptions): ExecResult {
  if (checkShellOption(options?.shell, 'execFileSync') === true) {
    throw new TypeError('execFileSync: shell: true makes no sense for an argv; use execSync(string, { shell: true })');
  }
  if (typeof file !== 'string') throw new TypeError(`execFileSync: file must be a string, got ${describe(file)}`);
  let display = quoteArg(file);
  if (Array.isArray(args)) for (const a of args) display += ` ${quoteArg(String(a))}`;
  return runSync({ file, args: args as string[], env: undefined, viaShell: false, display, list: null }, options, 'execFileSync');
}

/** exec on this thread: a command string or an argv array, as exec takes it; blocks the event loop until done. */
export function execSync(command: CommandInput, options?: ExecSyncOptionsUtf8): ExecResult<string>;
export function execSync(command: CommandInput, options: ExecSyncOptionsBuffer): ExecResult<Buffer>;
export function execSync(command: CommandInput, options?: ExecSyncOptions): ExecResult;
export function execSync(command: CommandInput, options?: ExecSyncOptions): ExecResult {
  // One command with its redirections runs here; pipelines and lists need exec().
  return runSync(resolveCommand(command, checkShellOption(options?.shell, 'execSync'), 'execSync', 'one'), options, 'execSync');
}
