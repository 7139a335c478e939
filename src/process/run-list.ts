// Runs what a command string with pipelines, lists or redirections says,
// without a shell, as dash runs it: pipelines one after another as `;`,
// `&&` and `||` say (on dash's `$?`: a signal is 128 + its number), their
// output captured in order as one, one deadline and one abort for all.
import { NativeStdio } from '../binding/binding';
import type { Pipeline, Redirect } from '../command/command-list';
import type { ExecOutcome } from './executor';
import { closeQuietly, runPipeline, shellStatus, type PipelineOutcome } from './pipeline';
import { signalNumberOf, type ExitStatus } from './status';
import { throwIfAborted } from './spawn';
import type { PreparedExec } from './exec';
import { binding } from '../binding/binding';
import net from 'node:net';

/** Runs one prepared command (the executor, or the loop where it is unavailable). */
export type RunOne = (p: PreparedExec) => Promise<ExecOutcome>;

/** A list's pipelines with every stage prepared (options checked, redirections set). */
export interface PreparedList {
  list: readonly Pipeline[];
  stages: PreparedExec[][];
  pipefail: boolean;
}

function concat(parts: Array<string | Buffer | undefined>): string | Buffer | undefined {
  const present = parts.filter((p): p is string | Buffer => p !== undefined);
  if (present.length === 0) return undefined;
  if (present.length === 1) return present[0];
  if (present.every((p) => typeof p === 'string')) return present.join('');
  return Buffer.concat(present.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
}

function lengthOf(v: string | Buffer | undefined): number {
  return v === undefined ? 0 : typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : v.length;
}

/** The first `max` bytes (a string cut at a character boundary). */
function cut(v: string | Buffer, max: number): string | Buffer {
  if (typeof v !== 'string') return v.subarray(0, max);
  return Buffer.from(v, 'utf8').subarray(0, max).toString('utf8').replace(/\uFFFD$/, '');
}

// glibc's strsignal() texts (C locale), which dash writes for a job killed by a signal.
const SIGNAL_TEXT = [
  '', 'Hangup', 'Interrupt', 'Quit', 'Illegal instruction', 'Trace/breakpoint trap', 'Aborted', 'Bus error',
  'Floating point exception', 'Killed', 'User defined signal 1', 'Segmentation fault', 'User defined signal 2',
  'Broken pipe', 'Alarm clock', 'Terminated', 'Stack fault', 'Child exited', 'Continued', 'Stopped (signal)',
  'Stopped', 'Stopped (tty input)', 'Stopped (tty output)', 'Urgent I/O condition', 'CPU time limit exceeded',
  'File size limit exceeded', 'Virtual timer expired', 'Profiling timer expired', 'Window changed', 'I/O possible',
  'Power failure', 'Bad system call',
];

/**
 * What dash writes to its stderr after a command of `sh -c` it waited for
 * died of a signal: the signal's description on a line, for every process
 * of the job, except for SIGINT and SIGPIPE.
 */
export function jobMessages(statuses: readonly ExitStatus[]): string {
  let out = '';
  for (const s of statuses) {
    const n = signum(s);
    if (n === 0 || n === 2 || n === 13) continue;
    out += `${n < SIGNAL_TEXT.length ? SIGNAL_TEXT[n] : n >= 34 && n <= 64 ? `Real-time signal ${n - 34}` : `Unknown signal ${n}`}\n`;
  }
  return out;
}

/**
 * Where dash's job line for a lone command goes: dash applies that
 * command's redirections in itself around the fork, so the line follows its
 * fd 2: 'err' (the captured stderr), 'out' (2>&1: the captured stdout), or
 * null (a file or closed: not written; we never write into a command's files).
 */
export function finalStderr(redirects: readonly Redirect[]): 'err' | 'out' | null {
  const fds: Array<'out' | 'err' | null> = [null, 'out', 'err', null, null, null, null, null, null, null];
  for (const r of redirects) {
    if (r.op === '<&' || r.op === '>&') fds[r.fd] = r.target === '-' ? null : fds[r.target.charCodeAt(0) - 48];
    else fds[r.fd] = null;
  }
  return fds[2];
}

function signum(s: ExitStatus): number {
  return signalNumberOf(s.signal);
}

/** Runs a list; `only` is true for one command with redirections, whose status stays the process's own. */
export async function runList(pl: PreparedList, first: PreparedExec, runOne: RunOne): Promise<ExecOutcome> {
  const t0 = performance.now();
  const o = first.spawnOpts;
  throwIfAborted(o.signal);
  const deadline = o.timeout > 0 ? t0 + o.timeout : 0;
  const single = pl.list.length === 1 && pl.list[0].stages.length === 1;
  // Several pipelines read one stdin, as the commands of `sh -c` read the shell's.
  let sharedIn: Int32Array | null = null;
  if (first.input !== undefined && pl.list.length > 1) {
    sharedIn = binding.pipe();
    const w = new net.Socket({ fd: sharedIn[1], readable: false, writable: true });
    w.on('error', () => {});
    if (!first.ref) w.unref();
    w.end(first.input);
  }
  const outs: Array<string | Buffer | undefined> = [];
  const errs: Array<string | Buffer | undefined> = [];
  const alls: Array<string | Buffer | undefined> = [];
  const rusage = { userCpuMs: 0, systemCpuMs: 0, maxRssKb: 0 };
  let last: ExecOutcome | null = null;
  let status = 0;
  let outputCut = false;
  let overflowed = 0;
  let killedByUs = false;
  try {
    for (let k = 0; k < pl.list.length; k++) {
      const p = pl.list[k];
      if ((p.op === '&&' && status !== 0) || (p.op === '||' && status === 0)) continue;
      // Aborted between two pipelines: what ran is the result, marked aborted.
      if (o.signal?.aborted === true && last !== null) {
        last = { ...last, status: { ...last.status, aborted: true }, abortReason: o.signal.reason };
        break;
      }
      const stages = pl.stages[k];
      let timeout = 0;
      if (deadline > 0) {
        timeout = Math.ceil(deadline - performance.now());
        if (timeout <= 0) {
          if (last !== null) last = { ...last, status: { ...last.status, timedOut: true } };
          break;
        }
      }
      for (const st of stages) {
        st.spawnOpts.timeout = timeout;
        if (sharedIn !== null) {
          st.input = undefined;
          st.spawnOpts.stdio[0] = NativeStdio.Fd;
          st.spawnOpts.stdio[1] = sharedIn[0];
        }
      }
      const lead = stages[0];
      const outcome = stages.length === 1
        ? await runOne(lead)
        : await runPipeline({
          stages: stages.map((st) => st.spawnOpts), capture: lead.capture, maxBuffer: lead.maxBuffer,
          truncate: lead.truncate, input: lead.input === undefined ? null : typeof lead.input === 'string' ? Buffer.from(lead.input, 'utf8') : lead.input,
          ref: lead.ref, outputGrace: lead.outputGrace, pipefail: pl.pipefail,
        });
      last = outcome;
      outs.push(outcome.stdout);
      errs.push(outcome.stderr);
      // We stopped it (maxBuffer): its status is the signal we sent, not a death dash would report.
      const stopped = outcome.overflowed !== 0 && !first.truncate;
      if (stopped) killedByUs = true;
      // dash's "Killed", "Terminated" lines; none when it was us that killed (dash would have died too).
      if (!single && !outcome.status.timedOut && !outcome.status.aborted && !stopped) {
        const said = jobMessages((outcome as PipelineOutcome).stages ?? [outcome.status]);
        const where = stages.length === 1 ? finalStderr(p.stages[0].redirects) : 'err';
        const into = where === 'err' ? errs : where === 'out' ? outs : null;
        const like = where === 'err' ? outcome.stderr : outcome.stdout;
        if (said !== '' && into !== null && like !== undefined) into.push(typeof like === 'string' ? said : Buffer.from(said, 'utf8'));
      }
      alls.push(outcome.all);
      rusage.userCpuMs += outcome.status.rusage.userCpuMs;
      rusage.systemCpuMs += outcome.status.rusage.systemCpuMs;
      rusage.maxRssKb = Math.max(rusage.maxRssKb, outcome.status.rusage.maxRssKb);
      outputCut ||= outcome.outputCut;
      overflowed |= outcome.overflowed;
      status = shellStatus(outcome.status, signum(outcome.status));
      if (outcome.status.timedOut || outcome.status.aborted || (overflowed !== 0 && !first.truncate)) break;
    }
  } finally {
    if (sharedIn !== null) closeQuietly(sharedIn[0]);
  }
  if (last === null) {
    // Nothing ran: only when the deadline passed before the first pipeline.
    throw new Error('noshell: a command list ran nothing');
  }
  let stdout = concat(outs);
  let stderr = concat(errs);
  let all = concat(alls);
  // One maxBuffer for the whole output, as for one command.
  const max = first.maxBuffer;
  if (lengthOf(stdout) > max) {
    stdout = cut(stdout!, max);
    if (first.truncate) overflowed |= 1;
    else if (overflowed === 0) overflowed = 1;
  }
  if (lengthOf(stderr) > max) {
    stderr = cut(stderr!, max);
    if (first.truncate) overflowed |= 2;
    else if (overflowed === 0) overflowed = 2;
  }
  if (all !== undefined && lengthOf(all) > 2 * max) all = cut(all, 2 * max);
  const s = last.status;
  const own = single || s.timedOut || s.aborted || killedByUs;
  return {
    status: {
      pid: s.pid,
      exitCode: own ? s.exitCode : status,
      signal: own ? s.signal : null,
      timedOut: s.timedOut,
      aborted: s.aborted,
      durationMs: performance.now() - t0,
      rusage: single ? s.rusage : rusage,
    },
    stdout, stderr, all, overflowed, outputCut, abortReason: last.abortReason,
  };
}
