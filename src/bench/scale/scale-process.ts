// One `noshell run` of `noshell bench --scale`, driven from outside as an
// operator would: its stderr lines (start, metrics address, reloads, the
// loop-delay windows), its JSON result lines (when each check was due and how
// late it started), its memory from /proc, and a stop by SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { LOOP_DELAY_ENV, parseLoopDelayLine, type LoopDelayWindow } from '../../daemon/loop-delay-report';

/** A loop-delay window, its end as epoch ms. */
export interface TimedWindow extends LoopDelayWindow {
  at: number;
}

/** A result: when it was due (epoch ms) and how late it started. */
export interface TimedResult {
  scheduledAt: number;
  latencyMs: number;
}

export interface StderrLine {
  text: string;
  at: number;
}

interface Waiter {
  test: (line: string) => boolean;
  resolve: (l: StderrLine) => void;
}

/** Reads a file's lines as they come, whole lines only. */
function onLines(stream: NodeJS.ReadableStream, each: (line: string) => void): void {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop()!;
    for (const p of parts) each(p);
  });
}

/** Whether a noshell package reports its own loop delay (else the probe is preloaded): dist/daemon/, or dist/ in builds before the layout by concern. */
export function hasLoopDelayReport(cli: string): boolean {
  const dist = path.dirname(cli);
  return existsSync(path.join(dist, 'daemon', 'loop-delay-report.js')) || existsSync(path.join(dist, 'loop-delay-report.js'));
}

/**
 * Whether that build's `noshell run` takes --tick. Given it, the bench runs with
 * `--tick 0`: each check starts when due, so a latency is what a scrape or a
 * reload adds, not up to one tick of waiting for the runner's next wake-up.
 */
export function hasTick(cli: string): boolean {
  try {
    return readFileSync(path.join(path.dirname(cli), 'cli', 'help.js'), 'utf8').includes('--tick D');
  } catch {
    return false;
  }
}

export class ScaleProcess {
  readonly child: ChildProcess;
  readonly windows: TimedWindow[] = [];
  readonly results: TimedResult[] = [];
  readonly lines: StderrLine[] = [];
  /** The latest due time of a result seen (epoch ms): due checks start in that order. */
  lastScheduledAt = -Infinity;
  /** Epoch ms, like the lines' `at`. */
  readonly spawnedAt = Date.now();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #waiters: Waiter[] = [];

  constructor(cli: string, file: string, windowMs: number) {
    const probe = hasLoopDelayReport(cli) ? [] : ['-r', path.join(__dirname, 'loop-delay-probe.js')];
    // As root, the checks run as root (as the bench itself does): a user per check would measure the switch too.
    const root = process.getuid?.() === 0 ? ['--allow-root'] : [];
    const tick = hasTick(cli) ? ['--tick', '0'] : [];
    this.child = spawn(process.execPath, [...probe, cli, 'run', file, '--format', 'json', '--metrics-port', '0', ...root, ...tick], {
      stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, [LOOP_DELAY_ENV]: String(windowMs) },
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    onLines(this.child.stdout!, (line) => {
      try {
        const r = JSON.parse(line) as { time: string; durationMs: number; latencyMs: number };
        const scheduledAt = Date.parse(r.time) - r.durationMs - r.latencyMs;
        this.results.push({ scheduledAt, latencyMs: r.latencyMs });
        if (scheduledAt > this.lastScheduledAt) this.lastScheduledAt = scheduledAt;
      } catch {
        // Not a result line: nothing to time.
      }
    });
    onLines(this.child.stderr!, (text) => {
      const w = parseLoopDelayLine(text);
      if (w !== null) {
        this.windows.push({ ...w, at: Date.parse(w.time) });
        return;
      }
      const l = { text, at: Date.now() };
      this.lines.push(l);
      this.#waiters = this.#waiters.filter((x) => (x.test(text) ? (x.resolve(l), false) : true));
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** The first stderr line from now on that passes `test`; rejects after `timeoutMs` or when the process exits. */
  waitLine(test: (line: string) => boolean, timeoutMs: number, what: string): Promise<StderrLine> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => done(new Error(`noshell bench --scale: no ${what} within ${timeoutMs / 1000} s`)), timeoutMs);
      const done = (e: Error | null, l?: StderrLine) => {
        clearTimeout(t);
        this.#waiters = this.#waiters.filter((x) => x !== waiter);
        if (e === null) resolve(l!);
        else reject(e);
      };
      const waiter: Waiter = { test, resolve: (l) => done(null, l) };
      this.#waiters.push(waiter);
      void this.exited.then(({ code, signal }) => done(new Error(`noshell bench --scale: noshell run exited (${code ?? signal}) ` +
        `before ${what}:\n${this.lines.slice(-5).map((l) => l.text).join('\n')}`)));
    });
  }

  /** VmRSS and VmHWM (peak) of the process, KiB. */
  memory(): { rssKiB: number; hwmKiB: number } {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const field = (name: string) => {
      const line = status.split('\n').find((l) => l.startsWith(`${name}:`));
      return line === undefined ? NaN : Number.parseInt(line.slice(name.length + 1).trim(), 10);
    };
    return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM') };
  }

  /**
   * The event-loop thread's time on a CPU and waiting for one (runnable, not
   * running), ms, from /proc/PID/task/PID/schedstat; null where the kernel
   * keeps no such figures (CONFIG_SCHED_INFO off) or the process is gone.
   */
  loopThreadSched(): { cpuMs: number; waitMs: number } | null {
    let text: string;
    try {
      text = readFileSync(`/proc/${this.pid}/task/${this.pid}/schedstat`, 'latin1');
    } catch {
      return null;
    }
    const [run, wait] = text.trim().split(' ').map(Number);
    return Number.isFinite(run) && Number.isFinite(wait) ? { cpuMs: run / 1e6, waitMs: wait / 1e6 } : null;
  }

  /**
   * CPU time, ms, from /proc/PID/stat: the process's own (every thread,
   * those that have exited too, as the reload's loading thread) and its
   * children's that it has waited for (the checks run and reaped); null
   * once it is gone. In USER_HZ ticks, 100 a second on Linux.
   */
  cpuTimes(): { ownMs: number; childrenMs: number } | null {
    let text: string;
    try {
      text = readFileSync(`/proc/${this.pid}/stat`, 'latin1');
    } catch {
      return null;
    }
    // After the command name, which may hold spaces and parentheses: state is field 3, utime 14.
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ').map(Number);
    const [utime, stime, cutime, cstime] = f.slice(11, 15);
    return [utime, stime, cutime, cstime].every(Number.isFinite) ? { ownMs: (utime + stime) * 10, childrenMs: (cutime + cstime) * 10 } : null;
  }

  /** The last loop-delay window's heap in use, bytes (NaN before the first). */
  heapUsed(): number {
    return this.windows.at(-1)?.heapUsedBytes ?? NaN;
  }

  /** SIGTERM, then SIGKILL if it is still there after `graceMs`; resolves when it has exited. */
  async stop(graceMs = 20_000): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    const t = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(t);
  }
}
