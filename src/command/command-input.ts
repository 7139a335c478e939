// Commands given as structure rather than a string: a pipeline as an array
// of argv arrays (or stages), a list as { list: [...] } (what parseCommand
// returns can be passed as it is). Checked here into the shape the runner
// takes, with TypeErrors that say which part is wrong.
import { checkString as stringOf, describe } from '../util/validate';
import type { ListOp, Pipeline, Redirect, RedirectOp, Stage } from './command-list';

const OPS: ReadonlySet<string> = new Set(['<', '>', '>>', '>|', '<>', '<&', '>&']);
const LIST_OPS: ReadonlySet<string> = new Set([';', '&&', '||']);

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function redirectOf(v: unknown, what: string): Redirect {
  if (!isPlainObject(v)) throw new TypeError(`${what} must be { fd, op, target }, got ${describe(v)}`);
  const { fd, op, target } = v;
  if (typeof fd !== 'number' || !Number.isInteger(fd) || fd < 0 || fd > 9) {
    throw new TypeError(`${what}.fd must be a whole number 0-9 (as the shell's), got ${describe(fd)}`);
  }
  if (typeof op !== 'string' || !OPS.has(op)) {
    throw new TypeError(`${what}.op must be one of < > >> >| <> <& >&, got ${describe(op)}`);
  }
  const t = typeof target === 'number' ? String(target) : stringOf(target, `${what}.target`);
  if ((op === '<&' || op === '>&') && !(t === '-' || (t.length === 1 && t >= '0' && t <= '9'))) {
    throw new TypeError(`${what}.target of ${op} must be an fd 0-9 or '-', got ${describe(target)}`);
  }
  return { fd, op: op as RedirectOp, target: t };
}

function stageOf(v: unknown, what: string): Stage {
  const env = Object.create(null) as Record<string, string>;
  if (Array.isArray(v)) v = { argv: v };
  if (!isPlainObject(v)) throw new TypeError(`${what} must be an argv array or { argv, env?, redirects? }, got ${describe(v)}`);
  const { argv, env: e, redirects } = v;
  if (!Array.isArray(argv) || argv.length === 0) throw new TypeError(`${what}.argv must be a non-empty array of strings`);
  const words = argv.map((a, i) => stringOf(a, `${what}.argv[${i}]`));
  if (e !== undefined) {
    if (!isPlainObject(e)) throw new TypeError(`${what}.env must be an object of strings, got ${describe(e)}`);
    for (const [k, val] of Object.entries(e)) env[k] = stringOf(val, `${what}.env.${k}`);
  }
  if (redirects !== undefined && !Array.isArray(redirects)) {
    throw new TypeError(`${what}.redirects must be an array, got ${describe(redirects)}`);
  }
  return { argv: words, env, redirects: (redirects ?? []).map((r, i) => redirectOf(r, `${what}.redirects[${i}]`)) };
}

function pipelineOf(v: unknown, what: string, first: boolean): Pipeline {
  if (!isPlainObject(v) || !Array.isArray(v.stages) || v.stages.length === 0) {
    throw new TypeError(`${what} must be { op, stages: [...] } with at least one stage, got ${describe(v)}`);
  }
  const op = v.op ?? ';';
  if (typeof op !== 'string' || !LIST_OPS.has(op)) throw new TypeError(`${what}.op must be ';', '&&' or '||', got ${describe(op)}`);
  if (first && op !== ';') throw new TypeError(`${what}.op: the first pipeline of a list runs always (';'), got ${describe(op)}`);
  return { op: op as ListOp, stages: v.stages.map((st, i) => stageOf(st, `${what}.stages[${i}]`)) };
}

/** Whether `command` is an argv array (strings only), as opposed to a pipeline of stages. */
export function isArgvArray(command: readonly unknown[]): boolean {
  return command.every((a) => typeof a === 'string');
}

/** A pipeline given as an array of stages (argv arrays or { argv, env?, redirects? }). */
export function pipelineInput(command: readonly unknown[], api: string): Pipeline[] {
  if (command.length === 0) throw new TypeError(`${api}: the pipeline must have at least one stage`);
  return [{ op: ';', stages: command.map((st, i) => stageOf(st, `${api}: stage ${i}`)) }];
}

/** A list given as { list: [{ op, stages }, ...] } (a ParsedCommand is one). */
export function listInput(command: Record<string, unknown>, api: string): Pipeline[] {
  const list = command.list;
  if (!Array.isArray(list) || list.length === 0) throw new TypeError(`${api}: list must be a non-empty array of pipelines`);
  if (command.needsShell === true) {
    throw new TypeError(`${api}: this parsed command needs a shell (${String(command.reasons)}); pass its string with shell: 'auto'`);
  }
  return list.map((p, i) => pipelineOf(p, `${api}: list[${i}]`, i === 0));
}
