// A pipeline of two or more stages (`a | b | c`) run without a shell, on the
// event-loop thread: each stage is started by the native spawn core with its
// stdin the previous stage's stdout pipe; all of them in the first one's
// process group; every stage's stderr (and the last one's stdout) go to the
// pipes the result captures, as they would go to /bin/sh's. The output grace
// starts once every stage has exited, as dash waits for every stage.
import fs from 'node:fs';
import net from 'node:net';
import { binding, NativeFlag, NativeStdio, type NativeWatch } from '../binding/binding';
import { spawnErrorOf } from './errors';
import type { NormalizedSpawn } from './options';
import type { ExecOutcome } from './executor';
import { childSetup } from './limits';
import { killOnExit } from './cleanup';
import { signalName, type ExitStatus } from './status';
import { traceExit, traceStart, type Traced } from './diagnostics';
import { throwIfAborted } from './spawn';

const SIGKILL = 9;

/** Modes of binding.kill(). */
const enum KillMode { Child = 0, Group = 1, GroupThenReap = 2 }

export interface PipelineRequest {
  /** Checked requests, one a stage, with the options' stdio (the first's stdin, the last's stdout, stderr). */
  stages: NormalizedSpawn[];
  /** NativeCapture bits for the pipeline's stdout and stderr. */
  capture: number;
  maxBuffer: number;
  /** Past maxBuffer: drop the rest and let the stages finish (checks) rather than stop them. */
  truncate: boolean;
  input: Uint8Array | null;
  ref: boolean;
  /** ms, once every stage has exited, that output is still read; -1: to its end. */
  outputGrace: number;
  /** The status is the last stage's that failed, not the last stage's. */
  pipefail: boolean;
}

export interface PipelineOutcome extends ExecOutcome {
  /** Each stage's own status, in order. */
  stages: ExitStatus[];
}

interface StageRun {
  watch: NativeWatch;
  pid: number;
  status: ExitStatus | null;
  traced: Traced;
}

/** Closes one of our pipe ends; one already gone is nothing to release. */
export function closeQuietly(fd: number): void {
  if (fd < 0) return;
  try {
    fs.closeSync(fd);
  } catch {
    // Already gone: nothing to release.
  }
}

/** The stage's stdio as an Int32Array(6) the native side takes. */
function stdioOf(kinds: ReadonlyArray<[NativeStdio, number]>): Int32Array {
  const a = new Int32Array(6);
  for (let i = 0; i < 3; i++) {
    a[i * 2] = kinds[i][0];
    a[i * 2 + 1] = kinds[i][1];
  }
  return a;
}

/** A later stage's flags and setup array: it joins group `pgid`, its own settings kept. */
export function joiningGroup(o: NormalizedSpawn, pgid: number): { flags: number; setup: Float64Array } {
  const flags = (o.flags & ~NativeFlag.NewProcessGroup) | NativeFlag.JoinProcessGroup;
  if (o.setup === null) return { flags, setup: childSetup(SIGKILL, 0, [], pgid) };
  const setup = o.setup.slice();
  setup[2] = pgid;
  return { flags, setup };
}

/** What a stage's stdio was asked to be, as [kind, fd]. */
function asked(o: NormalizedSpawn, i: number): [NativeStdio, number] {
  return [o.stdio[i * 2], o.stdio[i * 2 + 1]];
}

/** dash's `$?` for a status: the exit code, or 128 + the signal's number. */
export function shellStatus(s: ExitStatus, signum: number): number {
  if (s.exitCode !== null) return s.exitCode;
  return signum > 0 ? 128 + signum : 1;
}

/**
 * Runs the stages; resolves when all of them have exited and the captured
 * output has ended (or its grace). Throws SpawnError (naming the stage) when
 * a stage cannot be started: the stages already started are killed and
 * reaped first.
 */
export async function runPipeline(req: PipelineRequest): Promise<PipelineOutcome> {
  const o0 = req.stages[0];
  throwIfAborted(o0.signal);
  const n = req.stages.length;
  const last = n - 1;
  const started = performance.now();
  const captureOut = (req.capture & 1) !== 0;
  const captureErr = (req.capture & 2) !== 0;
  const lastOut = asked(req.stages[last], 1);
  // Where every stage's stderr goes: the captured pipe, or with
  // stderr: 'stdout' wherever the pipeline's stdout goes.
  const errKind = asked(o0, 2);
  const toStdout = errKind[0] === NativeStdio.Stdout;
  const mine: number[] = []; // our ends of pipes we made, closed at the end
  let errPipe: Int32Array | null = null;
  let outPipe: Int32Array | null = null;
  if (captureErr) {
    errPipe = binding.pipe();
    mine.push(errPipe[0], errPipe[1]);
  }
  if (toStdout && captureOut) {
    outPipe = binding.pipe();
    mine.push(outPipe[0], outPipe[1]);
  }
  let stderrOf: [NativeStdio, number];
  if (errPipe !== null) stderrOf = [NativeStdio.Fd, errPipe[1]];
  else if (!toStdout) stderrOf = errKind;
  else if (outPipe !== null) stderrOf = [NativeStdio.Fd, outPipe[1]];
  else if (lastOut[0] === NativeStdio.Inherit) stderrOf = [NativeStdio.Fd, 1];
  else stderrOf = lastOut;

  const runs: StageRun[] = [];
  let unreaped = 0;
  let pgid = 0;
  let timedOut = false;
  let aborted = false;
  let exceeded = 0;
  let captured: { stdout: string | Buffer | undefined; stderr: string | Buffer | undefined; overflowed: number; all: string | Buffer | undefined } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let forceTimer: NodeJS.Timeout | undefined;
  let forget: (() => void) | undefined;
  let spawning = true;
  let settle!: () => void;
  const done = new Promise<void>((resolve) => {
    settle = resolve;
  });

  let terminated = false;
  /**
   * Signals what is left of the pipeline: its group through a stage still
   * unreaped (whose zombie pins the group id), else each stage.
   */
  const kill = (signal: number): void => {
    const alive = runs.filter((r) => r.status === null);
    if (alive.length === 0) return;
    if (o0.processGroup) binding.kill(alive[0].watch, signal, KillMode.Group);
    else for (const r of alive) binding.kill(r.watch, signal, KillMode.Child);
  };
  /**
   * After a timeout, abort or maxBuffer: the last stage left SIGKILLs what is
   * left of the group when it exits, before it is reaped (as one command's
   * group is killed at its exit): a grandchild that ignores SIGTERM does not
   * outlive the pipeline.
   */
  const armLast = (): void => {
    const alive = runs.filter((r) => r.status === null);
    if (o0.processGroup && alive.length === 1 && runs.length === n) binding.kill(alive[0].watch, 0, KillMode.GroupThenReap);
  };
  const lastWatch = (): NativeWatch | undefined => (runs.length === n ? runs[last].watch : undefined);
  const terminate = (): void => {
    terminated = true;
    kill(o0.killSignal);
    armLast();
    const w = lastWatch();
    if (o0.forceKillAfter > 0 && o0.killSignal !== SIGKILL) {
      if (forceTimer === undefined && unreaped > 0) {
        forceTimer = setTimeout(() => {
          kill(SIGKILL);
          const lw = lastWatch();
          if (lw !== undefined) binding.abandon(lw);
        }, o0.forceKillAfter);
        if (!req.ref) forceTimer.unref();
      }
    } else if (w !== undefined) {
      binding.abandon(w);
    }
  };

  const onExit = (i: number, since: number) => (
    code: number, sig: number, userUs: number, systemUs: number, maxRssKb: number,
    stdout?: string | Buffer, stderr?: string | Buffer, overflowed = 0, all?: string | Buffer,
  ): void => {
    const r = runs[i];
    r.status = {
      pid: r.pid,
      exitCode: code >= 0 && sig === 0 ? code : null,
      signal: sig > 0 ? signalName(sig) : null,
      timedOut, aborted,
      durationMs: performance.now() - since,
      rusage: { userCpuMs: userUs / 1000, systemCpuMs: systemUs / 1000, maxRssKb },
    };
    traceExit(r.traced, r.status);
    unreaped--;
    if (terminated) armLast();
    if (i === last) captured = { stdout, stderr, overflowed, all };
    // Every other stage is done: the last one's output grace may run.
    if (runs.length === n && runs[last].status === null && runs.every((s, j) => j === last || s.status !== null)) {
      binding.releaseGrace(runs[last].watch);
    }
    if (unreaped === 0 && !spawning) settle();
  };

  let prevRead = -1;
  let inputFd = -1;
  try {
    for (let i = 0; i < n; i++) {
      const o = req.stages[i];
      const isLast = i === last;
      const stdin: [NativeStdio, number] = i === 0 ? asked(o, 0) : [NativeStdio.Fd, prevRead];
      let stdout: [NativeStdio, number];
      if (!isLast) stdout = [NativeStdio.Pipe, -1];
      else if (outPipe !== null) stdout = [NativeStdio.Fd, outPipe[1]];
      else stdout = lastOut;
      let flags = o.flags;
      let setup = o.setup;
      if (i > 0 && o.processGroup) {
        ({ flags, setup } = joiningGroup(o, pgid));
      }
      let capture = 0;
      let captureFrom: Int32Array | null = null;
      if (isLast) {
        capture = req.capture;
        captureFrom = new Int32Array([outPipe !== null ? outPipe[0] : -1, errPipe !== null ? errPipe[0] : -1]);
        // Handed over to the last stage's spawn, which closes them whatever happens.
        if (outPipe !== null) mine.splice(mine.indexOf(outPipe[0]), 1);
        if (errPipe !== null) mine.splice(mine.indexOf(errPipe[0]), 1);
      }
      const out = new Int32Array(7);
      const t0 = performance.now();
      const watch = binding.spawn(
        o.file, o.argv, o.envp, o.searchPath, o.cwd, stdioOf([stdin, stdout, stderrOf]), flags,
        o.uid, o.gid, o.method, out, capture, req.maxBuffer, onExit(i, t0),
        isLast && !req.truncate && capture !== 0
          ? (stream: 1 | 2) => {
            if (exceeded === 0) exceeded = stream;
            terminate();
          }
          : undefined,
        o.groups, setup, o.cgroup, isLast ? req.outputGrace : -1, o.redirects, captureFrom, isLast,
      );
      closeQuietly(prevRead);
      prevRead = -1;
      if (watch === undefined) {
        throw spawnErrorOf(o, out[0], binding.steps[out[1]] ?? 'spawn', out[6], i, n);
      }
      runs.push({ watch, pid: out[2], status: null, traced: traceStart(o, 'loop', out[2]) });
      unreaped++;
      if (i === 0) {
        pgid = out[2];
        inputFd = out[3];
      }
      if (!isLast) prevRead = out[4];
      if (!req.ref) binding.unref(watch);
    }
  } catch (err) {
    closeQuietly(prevRead);
    closeQuietly(inputFd);
    for (const fd of mine) closeQuietly(fd);
    // The stages already started never see the rest of the pipeline.
    kill(SIGKILL);
    spawning = false;
    if (unreaped > 0) await done;
    throw err;
  }
  spawning = false;
  if (unreaped === 0) settle();
  // The stages hold the write ends now; ours would keep the output open.
  for (const fd of mine) closeQuietly(fd);

  if (inputFd >= 0) writeInput(inputFd, req.input, req.ref);
  if (o0.cleanup) forget = killOnExit(() => kill(o0.killSignal));
  if (o0.timeout > 0) {
    timer = setTimeout(() => {
      // Every stage ended on its own, output held by what they left: not a timeout.
      if (req.outputGrace >= 0 && runs.every((r, j) => j === last || r.status !== null) && binding.cutOutput(runs[last].watch)) return;
      timedOut = true;
      terminate();
    }, o0.timeout);
    if (!req.ref) timer.unref();
  }
  const signal = o0.signal;
  const onAbort = (): void => {
    aborted = true;
    terminate();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();

  await done;
  clearTimeout(timer);
  clearTimeout(forceTimer);
  forget?.();
  signal?.removeEventListener('abort', onAbort);

  const statuses = runs.map((r) => ({ ...r.status!, timedOut, aborted }));
  let pick = statuses[last];
  if (req.pipefail) {
    for (let i = last; i >= 0; i--) {
      if (statuses[i].exitCode !== 0) {
        pick = statuses[i];
        break;
      }
    }
  }
  const rusage = { userCpuMs: 0, systemCpuMs: 0, maxRssKb: 0 };
  for (const s of statuses) {
    rusage.userCpuMs += s.rusage.userCpuMs;
    rusage.systemCpuMs += s.rusage.systemCpuMs;
    rusage.maxRssKb = Math.max(rusage.maxRssKb, s.rusage.maxRssKb);
  }
  const bits = captured?.overflowed ?? 0;
  return {
    status: { ...pick, durationMs: performance.now() - started, rusage },
    stdout: captured?.stdout,
    stderr: captured?.stderr,
    overflowed: req.truncate ? bits & 3 : exceeded,
    outputCut: (bits & 4) !== 0,
    all: captured?.all,
    abortReason: aborted ? (signal?.reason as unknown) : undefined,
    stages: statuses,
  };
}

/** The input, written to the first stage's stdin pipe, which is then closed (EPIPE is expected). */
function writeInput(fd: number, input: Uint8Array | null, ref: boolean): void {
  const stdin = new net.Socket({ fd, readable: false, writable: true });
  stdin.on('error', () => {});
  if (!ref) stdin.unref();
  if (input !== null) stdin.end(input);
  else stdin.end();
}
