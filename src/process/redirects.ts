// A command's redirections (`>> file`, `2>&1`, `<&-`) as the native side
// applies them in the child: after its stdio, with its user's credentials,
// relative to its cwd, in the order written (dash's order).
import { constants } from 'node:fs';
import { NativeMethod, NativeRedirect, type NativeRedirects } from '../binding/binding';
import { redirectTexts } from '../command/shell-option';
import type { Redirect } from '../command/command-list';
import type { NormalizedSpawn } from './options';

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND } = constants;

/** The flags dash opens each form with (noclobber off, so `>|` is `>`). */
const OPEN_FLAGS: Record<string, number> = {
  '<': O_RDONLY,
  '>': O_WRONLY | O_CREAT | O_TRUNC,
  '>|': O_WRONLY | O_CREAT | O_TRUNC,
  '>>': O_WRONLY | O_CREAT | O_APPEND,
  '<>': O_RDWR | O_CREAT,
};

export function nativeRedirects(list: readonly Redirect[]): NativeRedirects {
  const out: NativeRedirects = [];
  for (const r of list) {
    if (r.op === '<&' || r.op === '>&') {
      if (r.target === '-') out.push(r.fd, NativeRedirect.Close, 0, 0, null);
      else out.push(r.fd, NativeRedirect.Dup, 0, r.target.charCodeAt(0) - 48, null);
    } else {
      out.push(r.fd, NativeRedirect.Open, OPEN_FLAGS[r.op], 0, r.target);
    }
  }
  return out;
}

/** Sets a checked request's redirections; TypeError where the method cannot apply them. */
export function applyRedirects(opts: NormalizedSpawn, list: readonly Redirect[], api: string): void {
  if (list.length === 0) return;
  if (opts.method === NativeMethod.PosixSpawn) {
    throw new TypeError(`${api}: method 'posix_spawn' cannot open redirections as the child's user; use 'auto' or 'vfork'`);
  }
  opts.redirects = nativeRedirects(list);
  opts.redirectTexts = redirectTexts(list);
}
