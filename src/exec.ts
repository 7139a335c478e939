// Buffered exec/execFile: run to completion, collect stdout/stderr, reject on
// failure with ExecError carrying the whole result.
import type { Readable } from 'node:stream';
import { NativeStdio } from './binding';
import { splitCommand } from './command';
import { ExecError } from './errors';
import { describe, normalizeSpawn, type SpawnOptions } from './options';
import { spawnNormalized } from './spawn';
import type { ExitStatus } from './status';
import type { Subprocess } from './subprocess';

export interface ExecOptions extends SpawnOptions {
  /** Written to the child's stdin, which is then closed. Default: stdin is /dev/null. */
  input?: string | Uint8Array;
  /** Bytes kept per stream (default 1 MiB); past it the child is killed. */
  maxBuffer?: number;
  encoding?: 'utf8' | 'buffer';
  /** Reject on non-zero exit, signal, timeout, abort or maxBuffer (default true). */
  reject?: boolean;
}

export interface ExecResult<T extends string | Buffer = string | Buffer> extends ExitStatus {
  stdout: T;
  stderr: T;
  /** The command as run, for messages. */
  command: string;
  viaShell: boolean;
  /** Which stream ran past maxBuffer, if any. */
  maxBufferExceeded: 'stdout' | 'stderr' | null;
}

const execKeys = new Set(['input', 'maxBuffer', 'encoding', 'reject']);
const DEFAULT_MAX_BUFFER = 1024 * 1024;

class Collector {
  chunks: Buffer[] = [];
  length = 0;
  exceeded = false;
}

function collect(stream: Readable | null, max: number, onExceeded: () => void): { c: Collector; done: Promise<void> } {
  const c = new Collector();
  if (stream === null) return { c, done: Promise.resolve() };
  const done = new Promise<void>((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      if (c.exceeded) return;
      const room = max - c.length;
      if (chunk.length > room) {
        // Keep exactly maxBuffer bytes; drop the rest and stop reading.
        if (room > 0) c.chunks.push(chunk.subarray(0, room));
        c.length = max;
        c.exceeded = true;
        stream.destroy();
        onExceeded();
        return;
      }
      c.chunks.push(chunk);
      c.length += chunk.length;
    });
    // A pipe read error (rare) ends collection like EOF; the exit status says the rest.
    stream.on('error', () => resolve());
    stream.on('close', () => resolve());
  });
  return { c, done };
}

function output(c: Collector, encoding: 'utf8' | 'buffer'): string | Buffer {
  const buf = c.chunks.length === 1 ? c.chunks[0] : Buffer.concat(c.chunks, c.length);
  return encoding === 'buffer' ? buf : buf.toString('utf8');
}

function quoteArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

function failureMessage(r: ExecResult, timeout: number): string | null {
  let what: string;
  if (r.maxBufferExceeded !== null) what = `Command's ${r.maxBufferExceeded} was larger than maxBuffer`;
  else if (r.timedOut) what = `Command timed out after ${timeout} ms`;
  else if (r.aborted) what = 'Command was aborted';
  else if (r.signal !== null) what = `Command was killed with ${r.signal}`;
  else if (r.exitCode !== 0) what = r.exitCode === null ? 'Command exit status was lost' : `Command failed with exit code ${r.exitCode}`;
  else return null;
  const stderr = typeof r.stderr === 'string' ? r.stderr : r.stderr.toString('utf8');
  const tail = stderr.trim() === '' ? '' : `\n${stderr.trimEnd().slice(-4096)}`;
  return `${what}: ${r.command}${tail}`;
}

function writeInput(child: Subprocess, input: string | Uint8Array | undefined): void {
  const stdin = child.stdin;
  if (stdin === null) return;
  // A child that exits without reading gets its pipe closed: EPIPE is expected.
  stdin.on('error', () => {});
  if (input !== undefined) stdin.end(input);
  else stdin.end();
}

/** Runs `file` with `args` (no shell) and buffers its output. */
export async function execFile(file: string, args?: readonly string[], options?: ExecOptions): Promise<ExecResult> {
  return run(file, args, options, 'execFile');
}

/**
 * Runs a command given as an argv array, or as a string of plain words
 * separated by blanks. A string that needs a shell throws ShellSyntaxError.
 */
export async function exec(command: string | readonly string[], options?: ExecOptions): Promise<ExecResult> {
  let argv: readonly string[];
  if (typeof command === 'string') {
    argv = splitCommand(command);
  } else if (Array.isArray(command)) {
    if (command.length === 0) throw new TypeError('exec: the argv array must not be empty');
    argv = command;
  } else {
    throw new TypeError(`exec: command must be a string or an argv array, got ${describe(command)}`);
  }
  return run(argv[0], argv.slice(1), options, 'exec');
}

async function run(file: string, args: readonly string[] | undefined, options: ExecOptions | undefined, api: string): Promise<ExecResult> {
  const o: ExecOptions = options ?? {};
  const spawnOpts = normalizeSpawn(file, args, o, api, execKeys);
  const maxBuffer = o.maxBuffer ?? DEFAULT_MAX_BUFFER;
  if (typeof maxBuffer !== 'number' || !(maxBuffer >= 0)) {
    throw new TypeError(`maxBuffer must be a non-negative number of bytes, got ${describe(maxBuffer)}`);
  }
  const encoding = o.encoding ?? 'utf8';
  if (encoding !== 'utf8' && encoding !== 'buffer') {
    throw new TypeError(`encoding must be 'utf8' or 'buffer', got ${describe(encoding)}`);
  }
  if (o.reject !== undefined && typeof o.reject !== 'boolean') {
    throw new TypeError(`reject must be a boolean, got ${describe(o.reject)}`);
  }
  const input = o.input;
  if (input !== undefined) {
    if (typeof input !== 'string' && !(input instanceof Uint8Array)) {
      throw new TypeError(`input must be a string or a Uint8Array, got ${describe(input)}`);
    }
    if (o.stdin !== undefined && o.stdin !== 'pipe') {
      throw new TypeError(`input needs stdin: 'pipe', got stdin: ${JSON.stringify(o.stdin)}`);
    }
  }
  // Without input, the child reads /dev/null rather than hanging on a pipe.
  if (o.stdin === undefined && input === undefined) spawnOpts.stdio[0] = NativeStdio.Ignore;

  const command = [file, ...(args ?? [])].map(quoteArg).join(' ');
  const child = spawnNormalized(spawnOpts);
  writeInput(child, input);

  let exceeded: 'stdout' | 'stderr' | null = null;
  const kill = (which: 'stdout' | 'stderr') => () => {
    if (exceeded === null) exceeded = which;
    if (spawnOpts.processGroup) child.killGroup(spawnOpts.killSignal);
    else child.kill(spawnOpts.killSignal);
  };
  const out = collect(child.stdout, maxBuffer, kill('stdout'));
  const err = collect(child.stderr, maxBuffer, kill('stderr'));
  const [status] = await Promise.all([child.exited, out.done, err.done]);

  const result: ExecResult = {
    ...status,
    stdout: output(out.c, encoding),
    stderr: output(err.c, encoding),
    command,
    viaShell: false,
    maxBufferExceeded: exceeded,
  };
  if (o.reject !== false) {
    const message = failureMessage(result, spawnOpts.timeout);
    if (message !== null) {
      throw new ExecError(message, { ...result, abortReason: child.abortReason });
    }
  }
  return result;
}
