// The shape of a command beyond one program: redirections, pipelines and
// lists, as parseCommand finds them in a string and as exec() takes them
// directly (no string parsing at all).

/** A redirection operator, as the shell writes it. */
export type RedirectOp = '<' | '>' | '>>' | '>|' | '<>' | '<&' | '>&';

/**
 * One redirection: `fd` (0-9) opened on a file, a copy of another fd, or
 * closed. For `<&` and `>&` the target is a digit (`2>&1`) or `-` (close).
 */
export interface Redirect {
  fd: number;
  op: RedirectOp;
  target: string;
}

/** One command of a pipeline: its argv, the NAME=value words before it, its redirections in order. */
export interface Stage {
  argv: string[];
  /** A null-prototype object (see ParsedCommand.env). */
  env: Record<string, string>;
  redirects: Redirect[];
}

/** The operator that runs a pipeline: ';' always (the first one too), '&&' after success, '||' after failure. */
export type ListOp = ';' | '&&' | '||';

/** Stages connected by pipes (`a | b | c`), run when `op` says so. */
export interface Pipeline {
  op: ListOp;
  stages: Stage[];
}

/** A redirection as exec() takes it: `target` may be a number for `<&` and `>&`. */
export interface RedirectInput {
  readonly fd: number;
  readonly op: RedirectOp;
  readonly target: string | number;
}

/** A stage as exec() takes it: an argv array, or argv with its environment and redirections. */
export type StageInput = readonly string[] | {
  readonly argv: readonly string[];
  readonly env?: Readonly<Record<string, string>> | undefined;
  readonly redirects?: readonly RedirectInput[] | undefined;
};

/** A pipeline of a list as exec() takes it (`op` ';' when left out). */
export interface PipelineInput {
  readonly op?: ListOp | undefined;
  readonly stages: readonly StageInput[];
}

/**
 * What exec() runs: a command string, an argv array, a pipeline (an array
 * of stages), or a list (what parseCommand returns is one).
 */
export type CommandInput = string | readonly string[] | readonly StageInput[] | { readonly list: readonly PipelineInput[] };

/** The fd a redirection names when the string gives none: 0 for input forms, 1 for output. */
export function defaultFd(op: RedirectOp): number {
  return op === '<' || op === '<>' || op === '<&' ? 0 : 1;
}
