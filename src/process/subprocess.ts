// A running child: its streams, kill(), and the exited promise. Timeouts and
// aborts kill the whole process group (killSignal, then SIGKILL).
import net from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { binding, type NativeWatch } from '../binding/binding';
import type { NormalizedSpawn, Signal } from './options';
import { errnoName } from './errors';
import { signalName, signalNumber, type ExitStatus } from './status';
import { NOT_TRACED, traceExit, type Traced } from './diagnostics';
import { interleavedLines, streamLines, type LinesOf } from './stream-lines';
import { killOnExit } from './cleanup';

const ESRCH = 3;

/** Modes of binding.kill(). */
const enum KillMode { Child = 0, Group = 1, GroupThenReap = 2 }

function drainUnread(...streams: Array<Readable | null>): void {
  for (const s of streams) {
    if (s !== null && !s.destroyed && s.readableFlowing === null && s.listenerCount('data') === 0 && s.listenerCount('readable') === 0) {
      s.resume();
    }
  }
}

const SIGKILL = 9;

function pipeStream(fd: number, readable: boolean): net.Socket | null {
  if (fd < 0) return null;
  return new net.Socket({ fd, readable, writable: !readable });
}

export class Subprocess {
  readonly pid: number;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** Resolves once the child has exited and was reaped; never rejects. */
  readonly exited: Promise<ExitStatus>;
  readonly spawnfile: string;
  readonly spawnargs: readonly string[];

  #watch: NativeWatch;
  #status: ExitStatus | null = null;
  #resolve!: (status: ExitStatus) => void;
  #started: number;
  #timer: NodeJS.Timeout | undefined;
  #forceTimer: NodeJS.Timeout | undefined;
  #timedOut = false;
  #unrefed = false;
  #aborted = false;
  #abortSignal: AbortSignal | undefined;
  #onAbort: (() => void) | undefined;
  #opts: NormalizedSpawn;
  #forgetOnExit: (() => void) | undefined;

  /** @internal Use spawn(). */
  constructor(opts: NormalizedSpawn, fds: Int32Array, watch: NativeWatch, started: number) {
    this.pid = fds[2];
    this.spawnfile = opts.file;
    this.spawnargs = opts.argv;
    this.#opts = opts;
    this.#started = started;
    this.exited = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    this.#watch = watch;
    this.stdin = pipeStream(fds[3], false);
    this.stdout = pipeStream(fds[4], true);
    this.stderr = pipeStream(fds[5], true);

    if (opts.cleanup) {
      const mode = opts.processGroup ? KillMode.Group : KillMode.Child;
      this.#forgetOnExit = killOnExit(() => binding.kill(watch, opts.killSignal, mode));
    }
    if (opts.timeout > 0) {
      this.#timer = setTimeout(() => {
        // Exited on its own, output held by what it left: not a timeout.
        if (this._graceful && binding.cutOutput(watch)) return;
        this.#timedOut = true;
        this._terminate();
      }, opts.timeout);
    }
    if (opts.signal !== undefined) {
      const signal = opts.signal;
      this.#abortSignal = signal;
      this.#onAbort = () => {
        this.#aborted = true;
        this._terminate();
      };
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  /**
   * The lines of the child's stdout (default), its stderr, or both as they
   * arrive, without their line ends. The stream must be a pipe. Breaking out
   * of the loop stops reading; the child runs on until it exits.
   */
  lines(of: LinesOf = 'stdout'): AsyncIterable<string> {
    const need = (s: Readable | null, name: string): Readable => {
      if (s === null) throw new TypeError(`lines('${of}'): ${name} is not a pipe (spawn with ${name}: 'pipe')`);
      return s;
    };
    if (of === 'stdout') return streamLines(need(this.stdout, 'stdout'));
    if (of === 'stderr') return streamLines(need(this.stderr, 'stderr'));
    if (of === 'both') return interleavedLines(need(this.stdout, 'stdout'), need(this.stderr, 'stderr'));
    throw new TypeError(`lines: which output must be 'stdout', 'stderr' or 'both', got ${JSON.stringify(of)}`);
  }

  /** The exit status once the child has exited, else null. */
  get exitStatus(): ExitStatus | null {
    return this.#status;
  }

  /** The AbortSignal's reason when the child was aborted. */
  get abortReason(): unknown {
    return this.#aborted ? (this.#abortSignal?.reason as unknown) : undefined;
  }

  /**
   * Sends a signal (default SIGTERM) to the child. Returns false once the
   * child has exited (its pid may belong to someone else by then).
   */
  kill(signal: Signal = 'SIGTERM'): boolean {
    return this.#send(signalNumber(signal, 'kill'), KillMode.Child);
  }

  /**
   * Sends a signal to the child's whole process group (processGroup: true),
   * grandchildren included. Returns false once the child has exited: the
   * group id is its pid, which may name someone else's group by then.
   */
  killGroup(signal: Signal = 'SIGTERM'): boolean {
    const n = signalNumber(signal, 'killGroup');
    if (!this.#opts.processGroup) {
      throw new TypeError('killGroup: the child was spawned with processGroup: false');
    }
    return this.#send(n, KillMode.Group);
  }

  /** Let the event loop exit while the child runs (its timers too; streams need their own unref). */
  unref(): this {
    this.#unrefed = true;
    binding.unref(this.#watch);
    this.#timer?.unref();
    this.#forceTimer?.unref();
    return this;
  }

  ref(): this {
    this.#unrefed = false;
    binding.ref(this.#watch);
    this.#timer?.ref();
    this.#forceTimer?.ref();
    return this;
  }

  /**
   * Timeout, abort, maxBuffer: killSignal to the group, SIGKILL after
   * forceKillAfter if the child still runs, and SIGKILL to whatever is left
   * of the group the moment the child exits (done natively before reaping,
   * while the zombie still pins the group id). Errors are not the caller's
   * to handle here: EPERM just means it was not delivered.
   */
  _terminate(): void {
    const o = this.#opts;
    const mode = o.processGroup ? KillMode.GroupThenReap : KillMode.Child;
    binding.kill(this.#watch, o.killSignal, mode);
    if (o.forceKillAfter > 0 && o.killSignal !== SIGKILL) {
      if (this.#forceTimer === undefined && this.#status === null) {
        this.#forceTimer = setTimeout(() => {
          this.#forceTimer = undefined;
          binding.kill(this.#watch, SIGKILL, mode);
          // Output still held open by something that left the group must
          // not keep the result waiting past the grace period.
          binding.abandon(this.#watch);
        }, o.forceKillAfter);
        if (this.#unrefed) this.#forceTimer.unref();
      }
    } else {
      binding.abandon(this.#watch);
    }
  }

  /**
   * @internal A pipeline's stage: `signal` to the group it is in (the first
   * stage's), and with `armed` SIGKILL to that group at its exit, before it is
   * reaped. Nothing once it is reaped.
   */
  _signalGroup(signal: number, armed: boolean): void {
    binding.kill(this.#watch, signal, armed ? KillMode.GroupThenReap : KillMode.Group);
  }

  /** kill(2) through the native watch, which refuses a reaped pid: ESRCH → false. */
  #send(signal: number, mode: KillMode): boolean {
    const err = binding.kill(this.#watch, signal, mode);
    if (err === 0) return true;
    if (err === ESRCH) return false;
    throw Object.assign(new Error(`kill ${mode === KillMode.Child ? this.pid : -this.pid} ${errnoName(err)}`), {
      code: errnoName(err), errno: -err, syscall: 'kill',
    });
  }

  /** @internal popen: the caller reads at its own pace and closes; keep unread output. */
  _keepUnread = false;
  /** @internal exec/runCheck with an output grace: a timeout after the child's exit lets the output go. */
  _graceful = false;
  /** @internal This child's diagnostics_channel messages (diagnostics.ts). */
  _traced: Traced = NOT_TRACED;

  /** @internal Output read natively (exec, runCheck), set just before exited resolves. */
  _captured: {
    stdout: string | Buffer | undefined; stderr: string | Buffer | undefined; overflowed: number; all: string | Buffer | undefined;
  } | undefined;

  /** @internal Called by spawn()'s native exit callback. */
  _onExit(
    code: number, sig: number, userUs: number, systemUs: number, maxRssKb: number,
    stdout: string | Buffer | undefined, stderr: string | Buffer | undefined, overflowed = 0,
    all?: string | Buffer,
  ): void {
    const status: ExitStatus = {
      pid: this.pid,
      exitCode: code >= 0 && sig === 0 ? code : null,
      signal: sig > 0 ? signalName(sig) : null,
      timedOut: this.#timedOut,
      aborted: this.#aborted,
      durationMs: performance.now() - this.#started,
      rusage: { userCpuMs: userUs / 1000, systemCpuMs: systemUs / 1000, maxRssKb },
    };
    // Reaped: from here on nothing may signal this pid.
    this.#status = status;
    this.#forgetOnExit?.();
    traceExit(this._traced, status);
    this._captured = { stdout, stderr, overflowed, all };
    clearTimeout(this.#timer);
    clearTimeout(this.#forceTimer);
    this.#forceTimer = undefined;
    if (this.#onAbort !== undefined) this.#abortSignal?.removeEventListener('abort', this.#onAbort);
    // Like node:child_process: our end of stdin goes with the child, and
    // output nobody listens to is drained so its pipe closes. setImmediate
    // lets code awaiting `exited` attach its listeners first.
    this.stdin?.destroy();
    if (!this._keepUnread && (this.stdout !== null || this.stderr !== null)) {
      setImmediate(drainUnread, this.stdout, this.stderr);
    }
    this.#resolve(status);
  }
}
