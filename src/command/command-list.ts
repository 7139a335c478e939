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

/** The fd a redirection names when the string gives none: 0 for input forms, 1 for output. */
export function defaultFd(op: RedirectOp): number {
  return op === '<' || op === '<>' || op === '<&' ? 0 : 1;
}
