// Errors shaped like Node's own: code, errno, syscall, path, spawnargs.
import os from 'node:os';
import { getSystemErrorName } from 'node:util';
import type { ExitStatus } from './status';

// os.constants.errno has aliases (EAGAIN/EWOULDBLOCK, ENOTSUP/EOPNOTSUPP):
// the name Node itself gives a number is libuv's, so that comes first. libuv
// does not know every errno (ENOEXEC, ECHILD, ESTALE…); for those the first
// name listed is used, never a later alias.
const errnoNames = new Map<number, string>();
for (const [name, n] of Object.entries(os.constants.errno)) {
  if (errnoNames.has(n)) continue;
  const uv = getSystemErrorName(-n);
  errnoNames.set(n, uv.startsWith('Unknown system error') ? name : uv);
}

/** Name of an errno value as Node names it ('ENOENT', 'EAGAIN'), or 'E<n>' when unknown. */
export function errnoName(errno: number): string {
  // Not libuv for numbers outside the table: it has pseudo-errnos of its own
  // there (-4095 is its EOF), which no system call returns.
  return errnoNames.get(errno) ?? `E${errno}`;
}

const explanations: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  ENOEXEC: 'not an executable format (a script without #! line?)',
  E2BIG: 'argument list and environment too long',
  ENOTDIR: 'a path component is not a directory',
  ENAMETOOLONG: 'name too long',
  ELOOP: 'too many symbolic links',
  EPERM: 'operation not permitted',
  EBADF: 'bad file descriptor',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in system',
  EAGAIN: 'resource temporarily unavailable',
  ENOMEM: 'out of memory',
  ETXTBSY: 'text file busy',
  EISDIR: 'is a directory',
};

/** What an errno means at one of the child's setup steps. */
const stepExplanations: Record<string, string> = {
  'cgroup:ENOTSUP': 'not a cgroup v2 directory (a cgroup v1 hierarchy, or no cgroup2 mounted there)',
  'cgroup:EBUSY': 'the cgroup is frozen, or has controllers enabled for its children (cgroup v2 puts processes only in leaves)',
  'cgroup:EPERM': 'another user could freeze this cgroup or one above it (its cgroup.freeze is theirs): the child would stall before execve',
  'cgroup:EXDEV': 'its cpuset.mems.effective differs from this process\'s memory nodes: the kernel would move memory the child still shares with this process',
  'cgroup:EACCES': 'permission denied (moving a process needs write access to both cgroups\' cgroup.procs)',
  'setrlimit:EPERM': 'raising a hard limit needs privilege (CAP_SYS_RESOURCE), and nofile cannot pass fs.nr_open',
  'setrlimit:EINVAL': 'the soft limit would be above the hard limit',
  'setpriority:EACCES': 'a nice value below the current one needs privilege (CAP_SYS_NICE)',
  'setpriority:EPERM': 'a nice value below the current one needs privilege (CAP_SYS_NICE)',
  'pdeathsig:ESRCH': 'this process was ending while the child started',
  'redirect:EBADF': 'the fd to copy is not open',
};

/** Where in a command a SpawnError happened, beyond the program. */
export interface SpawnErrorPlace {
  /** The redirection that could not be applied, as written (`>> '/var/log/x'`, `2>&9`). */
  redirection?: string | undefined;
  /** The stage of a pipeline (0 the first) that could not be started, and how many it has. */
  stage?: number | undefined;
  stages?: number | undefined;
}

/** What spawnErrorOf needs of a checked request. */
interface SpawnRequestLike {
  file: string;
  argv: readonly string[];
  cwd: string | null;
  cgroup: string | null;
  redirectTexts: readonly string[] | null;
}

/** The SpawnError for a request that failed at `step` (`redirect`: the index of the redirection). */
export function spawnErrorOf(o: SpawnRequestLike, errno: number, step: string, redirect = -1, stage?: number, stages?: number): SpawnError {
  const redirection = step === 'redirect' && redirect >= 0 ? o.redirectTexts?.[redirect] : undefined;
  return new SpawnError(errno, step, o.file, o.argv.slice(1), o.cwd ?? undefined, o.cgroup ?? undefined, { redirection, stage, stages });
}

/** The program could not be started; nothing runs. */
export class SpawnError extends Error {
  /** 'ENOENT', 'EACCES', … */
  readonly code: string;
  /** Negative errno, as in Node's errors. */
  readonly errno: number;
  /** 'spawn <file>', as in Node. */
  readonly syscall: string;
  readonly path: string;
  readonly spawnargs: string[];
  /** What failed: 'resolve' (PATH search), 'execve', 'chdir', 'setuid', 'pipe2', … */
  readonly step: string;
  readonly cwd: string | undefined;
  /** At step 'redirect': the redirection, as written. */
  readonly redirection: string | undefined;
  /** In a pipeline: the stage (0 the first) that could not be started. */
  readonly stage: number | undefined;

  constructor(
    errno: number, step: string, file: string, args: readonly string[], cwd?: string, cgroup?: string, place?: SpawnErrorPlace,
  ) {
    const code = errnoName(errno);
    let where =
      step === 'chdir' ? ` (cwd ${JSON.stringify(cwd)})` : step === 'cgroup' ? ` (cgroup ${JSON.stringify(cgroup)})` : '';
    if (place?.redirection !== undefined) where += ` (${place.redirection})`;
    if (place?.stage !== undefined) where += ` (stage ${place.stage + 1} of ${place.stages ?? '?'} of a pipeline)`;
    const why = stepExplanations[`${step}:${code}`] ?? explanations[code] ?? 'failed';
    super(`spawn ${file} ${code}: ${why} at ${step}${where}`);
    this.name = 'SpawnError';
    this.code = code;
    this.errno = -errno;
    this.syscall = `spawn ${file}`;
    this.path = file;
    this.spawnargs = [...args];
    this.step = step;
    this.cwd = cwd;
    this.redirection = place?.redirection;
    this.stage = place?.stage;
  }
}

/** What exec/execFile reject with: the whole result is on the error. */
/**
 * A rejected exec/execFile. `T` is what stdout and stderr hold, as for the
 * result: `string` with the default encoding, `Buffer` with
 * `encoding: 'buffer'`. A `catch` gets `unknown`: narrow with instanceof, then
 * `err as ExecError<string>` where the call's encoding says so.
 */
export class ExecError<T extends string | Buffer = string | Buffer> extends Error {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  readonly maxBufferExceeded: 'stdout' | 'stderr' | null;
  /** See ExecResult.outputCut. */
  readonly outputCut: boolean;
  /** With `all: true`: stdout and stderr interleaved as they came. */
  readonly all: T | undefined;
  readonly stdout: T;
  readonly stderr: T;
  readonly command: string;
  readonly result: ExitStatus & { stdout: T; stderr: T };

  constructor(message: string, result: ExecErrorResult<T>) {
    super(message, result.abortReason !== undefined ? { cause: result.abortReason } : undefined);
    this.name = 'ExecError';
    this.exitCode = result.exitCode;
    this.signal = result.signal;
    this.timedOut = result.timedOut;
    this.aborted = result.aborted;
    this.maxBufferExceeded = result.maxBufferExceeded;
    this.outputCut = result.outputCut;
    this.all = result.all;
    this.stdout = result.stdout;
    this.stderr = result.stderr;
    this.command = result.command;
    this.result = result;
  }
}

export interface ExecErrorResult<T extends string | Buffer = string | Buffer> extends ExitStatus {
  stdout: T;
  stderr: T;
  command: string;
  maxBufferExceeded: 'stdout' | 'stderr' | null;
  outputCut: boolean;
  all?: T | undefined;
  abortReason?: unknown;
}

// The command layer's error, re-exported with the others.
export { ShellSyntaxError } from '../command/shell-syntax-error';
