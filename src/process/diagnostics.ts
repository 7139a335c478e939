// What ran, for whoever asks: node:diagnostics_channel messages at each
// child's start and exit ('noshell:start', 'noshell:exit'), and
// NODE_DEBUG=noshell printing them to stderr. Nothing is built when no one
// subscribes: each publish point asks hasSubscribers first.
import dc from 'node:diagnostics_channel';
import { debuglog } from 'node:util';
import { NativeFlag, NativeMethod } from '../binding/binding';
import type { NormalizedSpawn, SpawnMethod } from './options';
import type { ExitStatus } from './status';

/** Where the child was spawned: the executor thread, or the event-loop thread. */
/** Where a child was started: the executor thread, the event loop, or the calling thread of a sync call. */
export type SpawnPath = 'executor' | 'loop' | 'sync';

export interface StartMessage {
  /** Pairs this start with its exit message; counts up from 1 per process. */
  id: number;
  file: string;
  /** argv[0] included. */
  argv: readonly string[];
  cwd: string | null;
  method: SpawnMethod;
  path: SpawnPath;
  /** null when the child keeps this process's identity. */
  uid: number | null;
  gid: number | null;
  /** null on the executor path: the pid is known when the child has run (the exit message has it). */
  pid: number | null;
}

export interface ExitMessage {
  id: number;
  file: string;
  argv: readonly string[];
  path: SpawnPath;
  /** The exit status; null when the child could not be started (see error). */
  status: ExitStatus | null;
  /** Why the child could not be started (a SpawnError), or null. */
  error: Error | null;
}

export const startChannel = dc.channel('noshell:start');
export const exitChannel = dc.channel('noshell:exit');

let lastId = 0;

const methodNames: Record<NativeMethod, SpawnMethod> = {
  [NativeMethod.Auto]: 'auto',
  [NativeMethod.PosixSpawn]: 'posix_spawn',
  [NativeMethod.Vfork]: 'vfork',
  [NativeMethod.Fork]: 'fork',
};

/** One child's messages: `id` 0 when no one listened at its start (its exit is then not published either). */
export interface Traced {
  id: number;
  file: string;
  argv: readonly string[];
  path: SpawnPath;
}

export const NOT_TRACED: Traced = { id: 0, file: '', argv: [], path: 'loop' };

/** Publishes a start (when anyone listens); the returned handle publishes its exit. */
export function traceStart(opts: NormalizedSpawn, path: SpawnPath, pid: number | null): Traced {
  if (!startChannel.hasSubscribers && !exitChannel.hasSubscribers) return NOT_TRACED;
  const traced: Traced = { id: ++lastId, file: opts.file, argv: opts.argv, path };
  if (startChannel.hasSubscribers) {
    const message: StartMessage = {
      id: traced.id, file: opts.file, argv: opts.argv, cwd: opts.cwd, method: methodNames[opts.method], path,
      uid: opts.flags & NativeFlag.SetUid ? opts.uid : null,
      gid: opts.flags & NativeFlag.SetGid ? opts.gid : null,
      pid,
    };
    startChannel.publish(message);
  }
  return traced;
}

/** Publishes the exit of a traced child: its status, or the error that kept it from starting. */
export function traceExit(traced: Traced, status: ExitStatus | null, error: Error | null = null): void {
  if (traced.id === 0 || !exitChannel.hasSubscribers) return;
  const message: ExitMessage = { id: traced.id, file: traced.file, argv: traced.argv, path: traced.path, status, error };
  exitChannel.publish(message);
}

// NODE_DEBUG=noshell: a line per start and exit on stderr, as Node's own
// debuglog writes them (`NOSHELL <pid>: …`).
const debug = debuglog('noshell');
if (debug.enabled) {
  dc.subscribe('noshell:start', (m) => {
    const s = m as StartMessage;
    debug('start #%d %j via %s (%s)%s%s', s.id, s.argv, s.path, s.method,
      s.pid === null ? '' : ` pid ${s.pid}`, s.uid === null ? '' : ` as ${s.uid}:${s.gid ?? ''}`);
  });
  dc.subscribe('noshell:exit', (m) => {
    const e = m as ExitMessage;
    if (e.status === null) {
      debug('exit #%d %j: not started: %s', e.id, e.argv, e.error?.message ?? 'unknown error');
      return;
    }
    const st = e.status;
    const how = st.signal !== null ? `signal ${st.signal}` : `exit ${st.exitCode ?? 'lost'}`;
    debug('exit #%d pid %d: %s%s in %s ms (cpu %s ms user, %s ms system, maxrss %d KiB)', e.id, st.pid, how,
      st.timedOut ? ' (timed out)' : st.aborted ? ' (aborted)' : '',
      st.durationMs.toFixed(1), st.rusage.userCpuMs.toFixed(1), st.rusage.systemCpuMs.toFixed(1), st.rusage.maxRssKb);
  });
}
