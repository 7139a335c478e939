// Commands given as structure rather than a string: a pipeline as an array
// of argv arrays (or stages), a list as { list: [...] } (what parseCommand
// returns can be passed as it is). Checked here into the shape the runner
// takes, with TypeErrors that say which part is wrong.
import { checkString as stringOf, describe } from '../util/validate';
import type { ListOp, Pipeline, Redirect, RedirectOp, Stage } from './command-list';
import { MAX_COMMANDS, MAX_REDIRECTS } from './parse-command';

const OPS: ReadonlySet<string> = new Set(['<', '>', '>>', '>|', '<>', '<&', '>&']);
const LIST_OPS: ReadonlySet<string> = new Set([';', '&&', '||']);

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An own property, read once (nothing inherited from a polluted prototype). */
function own(o: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(o, key) ? o[key] : undefined;
}

/** Each element checked as it is read, by index: no array method of the caller's runs. */
function eachOf<T>(a: readonly unknown[], check: (v: unknown, i: number) => T): T[] {
  const out: T[] = [];
  const n = a.length;
  for (let i = 0; i < n; i++) out.push(check(a[i], i));
  return out;
}

function redirectOf(v: unknown, what: string): Redirect {
  if (!isPlainObject(v)) throw new TypeError(`${what} must be { fd, op, target }, got ${describe(v)}`);
  const fd = own(v, 'fd');
  const op = own(v, 'op');
  const target = own(v, 'target');
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
  let argv: unknown;
  let e: unknown;
  let redirects: unknown;
  if (Array.isArray(v)) argv = v;
  else if (isPlainObject(v)) {
    argv = own(v, 'argv');
    e = own(v, 'env');
    redirects = own(v, 'redirects');
  } else {
    throw new TypeError(`${what} must be an argv array or { argv, env?, redirects? }, got ${describe(v)}`);
  }
  if (!Array.isArray(argv) || argv.length === 0) throw new TypeError(`${what}.argv must be a non-empty array of strings`);
  const words = eachOf(argv, (a, i) => stringOf(a, `${what}.argv[${i}]`));
  if (e !== undefined) {
    if (!isPlainObject(e)) throw new TypeError(`${what}.env must be an object of strings, got ${describe(e)}`);
    for (const k of Object.keys(e)) env[k] = stringOf(e[k], `${what}.env.${k}`);
  }
  if (redirects !== undefined && !Array.isArray(redirects)) {
    throw new TypeError(`${what}.redirects must be an array, got ${describe(redirects)}`);
  }
  return { argv: words, env, redirects: eachOf(redirects ?? [], (r, i) => redirectOf(r, `${what}.redirects[${i}]`)) };
}

function pipelineOf(v: unknown, what: string, first: boolean): Pipeline {
  const stages = isPlainObject(v) ? own(v, 'stages') : undefined;
  if (!isPlainObject(v) || !Array.isArray(stages) || stages.length === 0) {
    throw new TypeError(`${what} must be { op, stages: [...] } with at least one stage, got ${describe(v)}`);
  }
  const op = own(v, 'op') ?? ';';
  if (typeof op !== 'string' || !LIST_OPS.has(op)) throw new TypeError(`${what}.op must be ';', '&&' or '||', got ${describe(op)}`);
  if (first && op !== ';') throw new TypeError(`${what}.op: the first pipeline of a list runs always (';'), got ${describe(op)}`);
  return { op: op as ListOp, stages: eachOf(stages, (st, i) => stageOf(st, `${what}.stages[${i}]`)) };
}

/** At most what a command string may hold (parse-command.ts): more is a TypeError here. */
function checkSize(list: readonly Pipeline[], api: string): Pipeline[] {
  let commands = 0;
  let redirects = 0;
  for (const p of list) {
    commands += p.stages.length;
    for (const st of p.stages) redirects += st.redirects.length;
  }
  if (commands > MAX_COMMANDS || redirects > MAX_REDIRECTS) {
    throw new TypeError(`${api}: at most ${MAX_COMMANDS} commands and ${MAX_REDIRECTS} redirections run without a shell, got ${commands} and ${redirects}`);
  }
  return list as Pipeline[];
}

/** Whether `command` is an argv array (strings only), as opposed to a pipeline of stages. */
export function isArgvArray(command: readonly unknown[]): boolean {
  const n = command.length;
  for (let i = 0; i < n; i++) if (typeof command[i] !== 'string') return false;
  return true;
}

/** A pipeline given as an array of stages (argv arrays or { argv, env?, redirects? }). */
export function pipelineInput(command: readonly unknown[], api: string): Pipeline[] {
  if (command.length === 0) throw new TypeError(`${api}: the pipeline must have at least one stage`);
  return checkSize([{ op: ';', stages: eachOf(command, (st, i) => stageOf(st, `${api}: stage ${i}`)) }], api);
}

/** A list given as { list: [{ op, stages }, ...] } (a ParsedCommand is one). */
export function listInput(command: Record<string, unknown>, api: string): Pipeline[] {
  const list = own(command, 'list');
  if (!Array.isArray(list) || list.length === 0) throw new TypeError(`${api}: list must be a non-empty array of pipelines`);
  if (own(command, 'needsShell') === true) {
    throw new TypeError(`${api}: this parsed command needs a shell (${String(own(command, 'reasons'))}); pass its string with shell: 'auto'`);
  }
  return checkSize(eachOf(list, (p, i) => pipelineOf(p, `${api}: list[${i}]`, i === 0)), api);
}
