// popen() of a pipeline (`ps ax | grep node`) or a list: every stage a
// Subprocess of its own, started by the spawn core with pipes we make
// between them (so no stage's output is a Node stream but the one popen
// hands out), each pipeline in its first stage's process group. 'r' reads
// what the last stages write, 'w' writes to what the first stages read.
// close() waits for every stage; the status is dash's `$?`. A timeout or an
// abort signals the running pipeline's group while a stage pins its id.
import net from 'node:net';
import { binding, NativeStdio } from '../binding/binding';
import type { NormalizedSpawn } from './options';
import { spawnNormalized } from './spawn';
import { closeQuietly, joiningGroup, shellStatus } from './pipeline';
import { signalNumberOf, type ExitStatus } from './status';
import type { ListOp } from '../command/command-list';
import type { Subprocess } from './subprocess';
import { throwIfAborted } from './spawn';

const SIGKILL = 9;

export interface StartedPopenPipeline {
  stream: net.Socket;
  /** The stage the stream belongs to (the last for 'r', the first for 'w'). */
  subprocess: Subprocess;
  stages: Subprocess[];
  /** Every stage reaped: dash's status of the pipeline. */
  done: Promise<ExitStatus>;
}


function setStdio(o: NormalizedSpawn, i: number, kind: NativeStdio, fd: number): void {
  o.stdio[i * 2] = kind;
  o.stdio[i * 2 + 1] = fd;
}

/** One pipeline of what popen runs, its stages checked. */
export interface PopenItem {
  op: ListOp;
  stages: NormalizedSpawn[];
}

/**
 * Starts the first pipeline of `items` now (so a SpawnError is thrown here,
 * naming the stage) and the others one after another as `;`, `&&` and `||`
 * say, all of them reading or writing the stream's pipe, whose other end we
 * hold until the last one is done, as `sh -c` would hold it. A later
 * pipeline that cannot start rejects `done`.
 */
export function startPopenList(items: PopenItem[], mode: 'r' | 'w'): StartedPopenPipeline {
  const o0 = items[0].stages[0];
  throwIfAborted(o0.signal);
  const end = binding.pipe();
  const keep = mode === 'r' ? end[0] : end[1];
  const shared = mode === 'r' ? end[1] : end[0];
  let current: Subprocess[] = [];
  let terminated = false;
  let timedOut = false;
  let aborted = false;
  /** Signals what is left: the group through a stage not yet reaped (it pins the id), else each stage. */
  const kill = (signal: number): void => {
    const alive = current.filter((c) => c.exitStatus === null);
    if (alive.length === 0) return;
    if (o0.processGroup) alive[0]._signalGroup(signal, false);
    else for (const c of alive) c.kill(signal);
  };
  /** After a timeout or abort, the last stage left SIGKILLs the rest of the group at its exit. */
  const armLast = (): void => {
    const alive = current.filter((c) => c.exitStatus === null);
    if (o0.processGroup && alive.length === 1) alive[0]._signalGroup(0, true);
  };

  /** Starts one pipeline's stages, joined by pipes, the stream's end at its start or end. */
  const startItem = (stages: NormalizedSpawn[]): Subprocess[] => {
    const n = stages.length;
    const first = stages[0];
    const errKind = first.stdio[4] as NativeStdio;
    const lastOut: [NativeStdio, number] = mode === 'r' ? [NativeStdio.Fd, shared] : [first.stdio[2], first.stdio[3]];
    let stderrOf: [NativeStdio, number] = [errKind, first.stdio[5]];
    if (errKind === NativeStdio.Stdout) stderrOf = lastOut[0] === NativeStdio.Inherit ? [NativeStdio.Fd, 1] : lastOut;
    const inner: number[] = [];
    const children: Subprocess[] = [];
    current = children;
    let pgid = 0;
    try {
      let prevRead = -1;
      for (let i = 0; i < n; i++) {
        // The list's timer and abort, not each stage's.
        const o: NormalizedSpawn = { ...stages[i], stdio: stages[i].stdio.slice(), timeout: 0, signal: undefined };
        if (i > 0) setStdio(o, 0, NativeStdio.Fd, prevRead);
        else if (mode === 'w') setStdio(o, 0, NativeStdio.Fd, shared);
        else setStdio(o, 0, NativeStdio.Ignore, -1);
        let nextRead = -1;
        if (i === n - 1) setStdio(o, 1, lastOut[0], lastOut[1]);
        else {
          const p = binding.pipe();
          inner.push(p[0], p[1]);
          setStdio(o, 1, NativeStdio.Fd, p[1]);
          nextRead = p[0];
        }
        setStdio(o, 2, stderrOf[0], stderrOf[1]);
        if (i > 0 && o.processGroup) {
          ({ flags: o.flags, setup: o.setup } = joiningGroup(o, pgid));
        }
        const child = spawnNormalized(o, undefined, n > 1 ? { stage: i, stages: n } : undefined);
        children.push(child);
        void child.exited.then(() => {
          if (terminated && current === children) armLast();
        });
        if (i === 0) pgid = child.pid;
        prevRead = nextRead;
      }
    } catch (err) {
      kill(SIGKILL);
      throw err;
    } finally {
      // The stages hold their ends of the pipes between them.
      for (const fd of inner) closeQuietly(fd);
    }
    return children;
  };

  let first: Subprocess[];
  try {
    first = startItem(items[0].stages);
  } catch (err) {
    closeQuietly(end[0]);
    closeQuietly(end[1]);
    throw err;
  }
  const stream = new net.Socket({ fd: keep, readable: mode === 'r', writable: mode === 'w' });
  const started = performance.now();

  let timer: NodeJS.Timeout | undefined;
  let forceTimer: NodeJS.Timeout | undefined;
  const terminate = (): void => {
    terminated = true;
    kill(o0.killSignal);
    armLast();
    if (o0.forceKillAfter > 0 && o0.killSignal !== SIGKILL && forceTimer === undefined) {
      forceTimer = setTimeout(() => kill(SIGKILL), o0.forceKillAfter);
    }
  };
  if (o0.timeout > 0) {
    timer = setTimeout(() => {
      timedOut = true;
      terminate();
    }, o0.timeout);
  }
  const onAbort = (): void => {
    aborted = true;
    terminate();
  };
  o0.signal?.addEventListener('abort', onAbort, { once: true });

  const done = (async (): Promise<ExitStatus> => {
    const rusage = { userCpuMs: 0, systemCpuMs: 0, maxRssKb: 0 };
    /** Waits for one pipeline's stages: its last stage's status. */
    const finish = async (children: Subprocess[]): Promise<ExitStatus> => {
      const statuses = await Promise.all(children.map((c) => c.exited));
      for (const st of statuses) {
        rusage.userCpuMs += st.rusage.userCpuMs;
        rusage.systemCpuMs += st.rusage.systemCpuMs;
        rusage.maxRssKb = Math.max(rusage.maxRssKb, st.rusage.maxRssKb);
      }
      return statuses[statuses.length - 1];
    };
    /** Whether the pipeline after one ending with `status` runs. */
    const runs = (op: ListOp, status: number): boolean => op === ';' || (op === '&&') === (status === 0);
    let last: ExitStatus;
    try {
      last = await finish(first);
      for (let k = 1; k < items.length; k++) {
        // A timeout or an abort (set while we waited) ends the list.
        if (terminated) break;
        if (!runs(items[k].op, shellStatus(last, signalNumberOf(last.signal)))) continue;
        last = await finish(startItem(items[k].stages));
      }
    } finally {
      clearTimeout(timer);
      clearTimeout(forceTimer);
      o0.signal?.removeEventListener('abort', onAbort);
      // The end the stages used: the reader sees its end, a writer gets EPIPE.
      closeQuietly(shared);
    }
    const single = items.length === 1 && items[0].stages.length === 1;
    const own = single || timedOut || aborted;
    return {
      pid: last.pid,
      exitCode: own ? last.exitCode : shellStatus(last, signalNumberOf(last.signal)),
      signal: own ? last.signal : null,
      timedOut, aborted,
      durationMs: performance.now() - started,
      rusage,
    };
  })();
  // A rejection (a later pipeline that could not start) is close()'s to report.
  done.catch(() => {});
  return { stream, subprocess: mode === 'r' ? first[first.length - 1] : first[0], stages: first, done };
}
