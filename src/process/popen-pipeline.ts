// popen() of a pipeline (`ps ax | grep node`): every stage a Subprocess of
// its own, started by the spawn core with pipes we make between them (so no
// stage's output is a Node stream but the one popen hands out), all in the
// first stage's process group. 'r' reads the last stage's stdout, 'w' writes
// the first one's stdin. close() waits for every stage; the status is dash's
// `$?` for the pipeline. A timeout or an abort signals the whole group while
// a stage still pins its id.
import fs from 'node:fs';
import net from 'node:net';
import { binding, NativeFlag, NativeStdio } from '../binding/binding';
import type { NormalizedSpawn } from './options';
import { childSetup } from './limits';
import { spawnNormalized } from './spawn';
import { shellStatus } from './pipeline';
import { signalNumberOf, type ExitStatus } from './status';
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

function closeQuietly(fd: number): void {
  if (fd < 0) return;
  try {
    fs.closeSync(fd);
  } catch {
    // already closed
  }
}

function setStdio(o: NormalizedSpawn, i: number, kind: NativeStdio, fd: number): void {
  o.stdio[i * 2] = kind;
  o.stdio[i * 2 + 1] = fd;
}

/**
 * Starts `stages` (checked requests carrying the options' stderr and, in 'w'
 * mode, stdout) connected by pipes. Throws SpawnError naming the stage that
 * could not start; the stages started before it are SIGKILLed (their
 * watches reap them).
 */
export function startPopenPipeline(stages: NormalizedSpawn[], mode: 'r' | 'w'): StartedPopenPipeline {
  const o0 = stages[0];
  throwIfAborted(o0.signal);
  const n = stages.length;
  const ours: number[] = [];
  const children: Subprocess[] = [];
  const errKind = o0.stdio[4] as NativeStdio;
  const toStdout = errKind === NativeStdio.Stdout;
  // The stream's pipe: made here, so that with stderr: 'stdout' every stage writes into it too.
  const end = binding.pipe();
  ours.push(end[0], end[1]);
  const lastOut: [NativeStdio, number] = mode === 'r'
    ? [NativeStdio.Fd, end[1]]
    : [o0.stdio[2], o0.stdio[3]];
  let stderrOf: [NativeStdio, number] = [errKind, o0.stdio[5]];
  if (toStdout) stderrOf = lastOut[0] === NativeStdio.Inherit ? [NativeStdio.Fd, 1] : lastOut;
  let pgid = 0;
  let timedOut = false;
  let aborted = false;
  let terminated = false;
  /** Signals what is left: the group through a stage not yet reaped (it pins the id), else each stage. */
  const kill = (signal: number): void => {
    const alive = children.filter((c) => c.exitStatus === null);
    if (alive.length === 0) return;
    if (o0.processGroup) alive[0]._signalGroup(signal, false);
    else for (const c of alive) c.kill(signal);
  };
  /** After a timeout or abort, the last stage left SIGKILLs the rest of the group at its exit. */
  const armLast = (): void => {
    const alive = children.filter((c) => c.exitStatus === null);
    if (o0.processGroup && alive.length === 1 && children.length === n) alive[0]._signalGroup(0, true);
  };
  try {
    let prevRead = mode === 'w' ? end[0] : -1;
    for (let i = 0; i < n; i++) {
      // The pipeline's timer and abort, not each stage's.
      const o: NormalizedSpawn = { ...stages[i], stdio: stages[i].stdio.slice(), timeout: 0, signal: undefined };
      if (i === 0) setStdio(o, 0, mode === 'w' ? NativeStdio.Fd : NativeStdio.Ignore, mode === 'w' ? end[0] : -1);
      else setStdio(o, 0, NativeStdio.Fd, prevRead);
      let nextRead = -1;
      if (i === n - 1) setStdio(o, 1, lastOut[0], lastOut[1]);
      else {
        const p = binding.pipe();
        ours.push(p[0], p[1]);
        setStdio(o, 1, NativeStdio.Fd, p[1]);
        nextRead = p[0];
      }
      setStdio(o, 2, stderrOf[0], stderrOf[1]);
      if (i > 0 && o.processGroup) {
        o.flags = (o.flags & ~NativeFlag.NewProcessGroup) | NativeFlag.JoinProcessGroup;
        const setup = o.setup === null ? childSetup(SIGKILL, 0, [], pgid) : o.setup.slice();
        setup[2] = pgid;
        o.setup = setup;
      }
      const child = spawnNormalized(o, undefined, { stage: i, stages: n });
      children.push(child);
      void child.exited.then(() => {
        if (terminated) armLast();
      });
      if (i === 0) pgid = child.pid;
      prevRead = nextRead;
    }
  } catch (err) {
    for (const fd of ours) closeQuietly(fd);
    kill(SIGKILL);
    throw err;
  }
  // The stages hold their ends; ours is the stream's.
  const keep = mode === 'r' ? end[0] : end[1];
  for (const fd of ours) if (fd !== keep) closeQuietly(fd);
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

  const done = Promise.all(children.map((c) => c.exited)).then((statuses) => {
    clearTimeout(timer);
    clearTimeout(forceTimer);
    o0.signal?.removeEventListener('abort', onAbort);
    const last = statuses[n - 1];
    const rusage = { userCpuMs: 0, systemCpuMs: 0, maxRssKb: 0 };
    for (const s of statuses) {
      rusage.userCpuMs += s.rusage.userCpuMs;
      rusage.systemCpuMs += s.rusage.systemCpuMs;
      rusage.maxRssKb = Math.max(rusage.maxRssKb, s.rusage.maxRssKb);
    }
    const own = timedOut || aborted;
    const signum = signalNumberOf(last.signal);
    return {
      pid: last.pid,
      exitCode: own ? last.exitCode : shellStatus(last, signum),
      signal: own ? last.signal : null,
      timedOut, aborted,
      durationMs: performance.now() - started,
      rusage,
    };
  });
  return { stream, subprocess: mode === 'r' ? children[n - 1] : children[0], stages: children, done };
}
