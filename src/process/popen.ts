// popen(): the popen(3) contract in Node's idiom, without /bin/sh. 'r' gives
// a Readable of the child's stdout, 'w' a Writable to its stdin; close() is
// pclose(): end our side, wait for the child, return its status.
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { checkShellOption, resolveCommand, type ShellOption } from '../command/shell-option';
import { applyRedirects } from './redirects';
import { describe, normalizeSpawn, type SpawnOptions, type StdioOption } from './options';
import { spawnNormalized } from './spawn';
import type { ExitStatus } from './status';
import type { Subprocess } from './subprocess';
import { NativeFlag } from '../binding/binding';
import type { CommandInput } from '../command/command-list';
import { startPopenList } from './popen-pipeline';

export interface PopenOptions extends Omit<SpawnOptions, 'stdin' | 'stdout'> {
  /** 'w' mode only: where the child's stdout goes (default 'inherit'). */
  stdout?: Exclude<StdioOption, 'pipe'> | undefined;
  /** Default 'inherit', as with popen(3). */
  stderr?: Exclude<StdioOption, 'pipe'> | 'stdout' | undefined;
  shell?: ShellOption | undefined;
}

interface PopenCommon {
  readonly pid: number;
  readonly subprocess: Subprocess;
  /** The command ran through /bin/sh -c (shell: 'auto' or true). */
  readonly viaShell: boolean;
  /** pclose(): ends our side, waits for the child. Same promise every call. */
  close(): Promise<ExitStatus>;
}

export type PopenReader = Readable & PopenCommon & {
  /** The child's output line by line (without line endings). */
  lines(): AsyncIterable<string>;
};
export type PopenWriter = Writable & PopenCommon;
export type Popen = PopenReader | PopenWriter;

const popenKeys = new Set(['shell']);

export function popen(command: CommandInput, mode: 'r', options?: PopenOptions): PopenReader;
export function popen(command: CommandInput, mode: 'w', options?: PopenOptions): PopenWriter;
export function popen(command: CommandInput, mode: 'r' | 'w', options?: PopenOptions): Popen;
export function popen(command: CommandInput, mode: 'r' | 'w', options?: PopenOptions): Popen {
  if (mode !== 'r' && mode !== 'w') {
    throw new TypeError(`popen: mode must be 'r' or 'w', got ${describe(mode)}`);
  }
  const o: PopenOptions = options ?? {};
  if (typeof o !== 'object' || o === null || Array.isArray(o)) {
    throw new TypeError(`popen: options must be an object, got ${describe(options)}`);
  }
  if ('stdin' in o) throw new TypeError('popen: stdin is set by the mode');
  if (mode === 'r' && o.stdout !== undefined) throw new TypeError("popen: stdout is the stream in mode 'r'");
  if ((o.stdout as unknown) === 'pipe' || (o.stderr as unknown) === 'pipe') {
    throw new TypeError('popen: only the mode\'s stream is a pipe; use spawn() for more');
  }
  const cmd = resolveCommand(command, checkShellOption(o.shell, 'popen'), 'popen');
  const optionsFor = (env: Record<string, string> | undefined): SpawnOptions => {
    const so: SpawnOptions = {
      ...o,
      ...(env !== undefined ? { env: { ...o.env, ...env } } : {}),
      stdin: mode === 'r' ? 'ignore' : 'pipe',
      stdout: mode === 'r' ? 'pipe' : (o.stdout ?? 'inherit'),
      stderr: o.stderr ?? 'inherit',
    };
    delete (so as PopenOptions).shell;
    return so;
  };
  let child: Subprocess;
  let stream: Readable & Writable;
  let exited: () => Promise<ExitStatus>;
  if (cmd.list !== null && (cmd.list.length > 1 || cmd.list[0].stages.length > 1)) {
    const items = cmd.list.map((pl) => ({
      op: pl.op,
      stages: pl.stages.map((st) => {
        const so = normalizeSpawn(st.argv[0], st.argv.slice(1), optionsFor(Object.keys(st.env).length > 0 ? st.env : undefined), 'popen', popenKeys);
        applyRedirects(so, st.redirects, 'popen');
        if (pl.stages.length > 1 && (so.flags & NativeFlag.NewSession) !== 0) {
          throw new TypeError('popen: detached starts one command in a new session; a pipeline\'s stages share one process group');
        }
        return so;
      }),
    }));
    const started = startPopenList(items, mode);
    child = started.subprocess;
    stream = started.stream;
    exited = () => started.done;
  } else {
    const opts = normalizeSpawn(cmd.file, cmd.args, optionsFor(cmd.env), 'popen', popenKeys);
    if (cmd.list !== null) applyRedirects(opts, cmd.list[0].stages[0].redirects, 'popen');
    child = spawnNormalized(opts);
    child._keepUnread = true;
    stream = (mode === 'r' ? child.stdout : child.stdin) as Readable & Writable;
    exited = () => child.exited;
  }
  if (mode === 'w') {
    // EPIPE is how a writer learns the child stopped reading; close() reports
    // the child's status. Other errors stay fatal unless the caller listens.
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && stream.listenerCount('error') === 1) throw err;
    });
  }

  let closing: Promise<ExitStatus> | undefined;
  const close = (): Promise<ExitStatus> => {
    closing ??= (async () => {
      if (mode === 'r') {
        // A child still writing gets SIGPIPE: its disposition is the default.
        stream.destroy();
      } else if (!stream.destroyed && !stream.writableFinished) {
        await new Promise<void>((resolve) => {
          // EPIPE when the child has stopped reading: its status tells the rest.
          stream.once('error', () => resolve());
          stream.end(() => resolve());
        });
      }
      return exited();
    })();
    return closing;
  };

  return Object.assign(stream, {
    pid: child.pid,
    subprocess: child,
    viaShell: cmd.viaShell,
    close,
    ...(mode === 'r'
      ? { lines: (): AsyncIterable<string> => createInterface({ input: stream, crlfDelay: Infinity }) }
      : {}),
  });
}
