// Spawn options: the public types, and their validation into what the native
// side takes. Everything is checked here, before anything is spawned.
import { parseDuration, type Duration } from '../util/duration';
import { fileURLToPath } from 'node:url';
import { NativeFlag, NativeMethod, NativeStdio, type NativeRedirects } from '../binding/binding';
import { signalNumber } from './status';
import { normalizeCredentials } from './credentials';
import { buildEnv } from './env';
import { stdioArray } from './stdio-array';
import { checkString, describe } from '../util/validate';
import { childSetup, normalizeCgroup, normalizeNice, normalizeRlimits, type Rlimits } from './limits';

export { checkString, describe };

export type StdioOption = 'pipe' | 'ignore' | 'inherit' | number;
export type SpawnMethod = 'auto' | 'posix_spawn' | 'vfork' | 'fork';
export type Signal = NodeJS.Signals | number;

export interface SpawnOptions {
  /** Working directory of the child. */
  cwd?: string | URL | undefined;
  /** Environment variables; with extendEnv (default) merged over process.env.
   * An undefined value removes the variable. */
  env?: Readonly<Record<string, string | undefined>>;
  extendEnv?: boolean | undefined;
  /** argv[0] seen by the child (default: file as given). */
  argv0?: string | undefined;
  stdin?: StdioOption | undefined;
  stdout?: StdioOption | undefined;
  /** 'stdout' sends stderr where stdout goes (2>&1). */
  stderr?: StdioOption | 'stdout' | undefined;
  /** ms (or "10s", "2m"…); then killSignal to the child's process group. 0 or undefined: none. */
  timeout?: Duration | undefined;
  killSignal?: Signal | undefined;
  /** ms (or "2s"…) after killSignal (timeout/abort) before SIGKILL; default 5000, 0 disables. */
  forceKillAfter?: Duration | undefined;
  signal?: AbortSignal | undefined;
  /** Child leads its own process group, so timeouts reach grandchildren (default true). */
  processGroup?: boolean | undefined;
  /** Run as this user; needs gid too. Uses the vfork path. */
  uid?: number | undefined;
  /** Run as this group (supplementary groups are cleared unless `groups` is given). */
  gid?: number | undefined;
  /** Supplementary group ids (with gid). */
  groups?: readonly number[] | undefined;
  /** 'auto' (default): our clone(CLONE_VM|CLONE_VFORK) path, as 'vfork'. 'posix_spawn' is glibc's. 'fork' is for benchmarks. */
  method?: SpawnMethod | undefined;
  /**
   * The child dies with this process: SIGKILL when the thread that started
   * it ends (PR_SET_PDEATHSIG; the process for the executor and the main
   * thread, the Worker for one started on a Worker's loop), and killSignal
   * to its group on a normal exit. Default false.
   */
  cleanup?: boolean | undefined;
  /** The child leads a new session (setsid): no controlling terminal, none of ours' signals. Default false. */
  detached?: boolean | undefined;
  /** Resource limits set in the child before execve. */
  rlimits?: Rlimits | undefined;
  /** The child's nice value, -20 … 19 (below ours needs privilege). */
  nice?: number | undefined;
  /** A cgroup v2 directory the child moves into before execve. */
  cgroup?: string | undefined;
}

/** What spawn() hands to the native side, already checked. */
export interface NormalizedSpawn {
  file: string;
  argv: string[];
  envp: string[] | null;
  searchPath: string | null;
  cwd: string | null;
  stdio: Int32Array;
  flags: number;
  uid: number;
  gid: number;
  groups: Uint32Array | null;
  method: NativeMethod;
  timeout: number;
  killSignal: number;
  forceKillAfter: number;
  signal: AbortSignal | undefined;
  processGroup: boolean;
  /** native/napi/child-setup.h; null when none of its settings is used. */
  setup: Float64Array | null;
  cgroup: string | null;
  cleanup: boolean;
  /** Applied in the child after its stdio (a command string's `>file`, `2>&1`); null: none. */
  redirects: NativeRedirects | null;
  /** Their text (`2>&1`, `>> 'out.log'`), for messages. */
  redirectTexts: string[] | null;
}

const spawnKeys = new Set([
  'cwd', 'env', 'extendEnv', 'argv0', 'stdin', 'stdout', 'stderr', 'timeout', 'killSignal',
  'forceKillAfter', 'signal', 'processGroup', 'uid', 'gid', 'groups', 'method',
  'cleanup', 'detached', 'rlimits', 'nice', 'cgroup',
]);

const methods: Record<string, NativeMethod> = {
  auto: NativeMethod.Auto,
  posix_spawn: NativeMethod.PosixSpawn,
  vfork: NativeMethod.Vfork,
  fork: NativeMethod.Fork,
};

const SIGTERM = 15;
const SIGKILL = 9;
/** What glibc's posix_spawn has no attribute for. */
const NOT_POSIX_SPAWN: ReadonlyArray<[number, string]> = [
  [NativeFlag.SetUid | NativeFlag.SetGid, 'set uid/gid'], [NativeFlag.DieWithParent, 'set cleanup'],
  [NativeFlag.SetNice, 'set nice'], [NativeFlag.SetCgroup, 'set a cgroup'],
];
const MAX_TIMER_MS = 2 ** 31 - 1;
const DEFAULT_FORCE_KILL_AFTER = 5000;

/** Throws TypeError for unknown keys; `extra` lists keys of wrapping APIs. */
export function checkOptionKeys(options: object, api: string, extra?: ReadonlySet<string>): void {
  for (const key of Object.keys(options)) {
    if (!spawnKeys.has(key) && !(extra?.has(key))) {
      throw new TypeError(`${api}: unknown option ${JSON.stringify(key)}`);
    }
  }
}

function checkMs(value: unknown, option: string): number {
  if (value === undefined) return 0;
  // A string with a unit, as checks files take it ("10s"); a bare string number is ms.
  if (typeof value === 'string') value = parseDuration(value, option);
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new TypeError(`${option} must be a number of milliseconds, got ${describe(value)}`);
  }
  if (value < 0) throw new RangeError(`${option} must not be negative, got ${value}`);
  // Node's timers turn anything above 2^31-1 into 1 ms; Infinity means never.
  if (value > MAX_TIMER_MS && value !== Infinity) {
    throw new RangeError(`${option} must be at most ${MAX_TIMER_MS} ms or Infinity, got ${value}`);
  }
  return value === Infinity ? 0 : value;
}

function stdioKind(value: unknown, i: number, out: Int32Array): void {
  const name = ['stdin', 'stdout', 'stderr'][i];
  let kind: NativeStdio;
  let fd = -1;
  if (value === undefined || value === 'pipe') kind = NativeStdio.Pipe;
  else if (value === 'ignore') kind = NativeStdio.Ignore;
  else if (value === 'inherit') kind = NativeStdio.Inherit;
  else if (value === 'stdout' && i === 2) kind = NativeStdio.Stdout;
  else if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0x7fffffff) {
    kind = NativeStdio.Fd;
    fd = value;
  } else {
    const allowed = i === 2 ? "'pipe', 'ignore', 'inherit', 'stdout' or an fd" : "'pipe', 'ignore', 'inherit' or an fd";
    throw new TypeError(`${name} must be ${allowed}, got ${describe(value)}`);
  }
  out[i * 2] = kind;
  out[i * 2 + 1] = fd;
}

function checkCommand(file: unknown, args: unknown, api: string): void {
  checkString(file, `${api}: file`);
  if ((file as string).length === 0) throw new TypeError(`${api}: file must not be empty`);
  if (args !== undefined && !Array.isArray(args)) {
    throw new TypeError(`${api}: args must be an array of strings, got ${describe(args)}`);
  }
}

function argvOf(file: string, args: unknown[] | undefined, argv0: string | undefined): string[] {
  const argv = [argv0 ?? file];
  if (args !== undefined) {
    for (let i = 0; i < args.length; i++) argv.push(checkString(args[i], `args[${i}]`));
  }
  return argv;
}

/**
 * The command's part of normalizeSpawn: `file` and `args` checked, and the
 * argv they run with (`argv0`, checked already, or the file first). Spawns
 * that share their options (a runner's checks) check those once and call
 * only this.
 */
export function commandArgv(file: unknown, args: unknown, argv0: string | undefined, api: string): string[] {
  checkCommand(file, args, api);
  return argvOf(file as string, args as unknown[] | undefined, argv0);
}

export function normalizeSpawn(
  file: unknown,
  args: unknown,
  options: SpawnOptions | undefined,
  api = 'spawn',
  extraKeys?: ReadonlySet<string>,
): NormalizedSpawn {
  checkCommand(file, args, api);
  const o: SpawnOptions = options ?? {};
  if (typeof o !== 'object' || o === null || Array.isArray(o)) {
    throw new TypeError(`${api}: options must be an object, got ${describe(options)}`);
  }
  checkOptionKeys(o, api, extraKeys);
  const argv = argvOf(file as string, args as unknown[] | undefined, o.argv0 === undefined ? undefined : checkString(o.argv0, 'argv0'));

  let cwd: string | null = null;
  if (o.cwd !== undefined) {
    // %00 in a file: URL decodes to a NUL, which the C side would silently
    // cut the path at: the same TypeError as a NUL in a string cwd.
    cwd = checkString(o.cwd instanceof URL ? fileURLToPath(o.cwd) : o.cwd, 'cwd');
  }

  if (o.extendEnv !== undefined && typeof o.extendEnv !== 'boolean') {
    throw new TypeError(`extendEnv must be a boolean, got ${describe(o.extendEnv)}`);
  }
  const { envp, searchPath } = buildEnv(o.env, o.extendEnv !== false);

  const stdio = stdioArray();
  stdioKind(o.stdin, 0, stdio);
  stdioKind(o.stdout, 1, stdio);
  stdioKind(o.stderr, 2, stdio);

  // Each read once: a getter may answer differently each time it is asked.
  const { cleanup: cleanupOption, detached, rlimits: rlimitsOption, nice: niceOption, cgroup: cgroupOption } = o;
  if (o.processGroup !== undefined && typeof o.processGroup !== 'boolean') {
    throw new TypeError(`processGroup must be a boolean, got ${describe(o.processGroup)}`);
  }
  const processGroup = o.processGroup !== false;
  if (!processGroup && detached === true) {
    throw new TypeError('detached: a detached child leads its own process group; leave processGroup out');
  }
  let flags = processGroup ? NativeFlag.NewProcessGroup : 0;
  const creds = normalizeCredentials(o.uid, o.gid, o.groups);
  flags |= creds.flags;

  for (const [key, value] of [['cleanup', cleanupOption], ['detached', detached]] as const) {
    if (value !== undefined && typeof value !== 'boolean') {
      throw new TypeError(`${key} must be a boolean, got ${describe(value)}`);
    }
  }
  const cleanup = cleanupOption === true;
  if (cleanup) flags |= NativeFlag.DieWithParent;
  if (detached === true) flags |= NativeFlag.NewSession;
  const rlimits = rlimitsOption === undefined ? [] : normalizeRlimits(rlimitsOption);
  let nice = 0;
  if (niceOption !== undefined) {
    nice = normalizeNice(niceOption);
    flags |= NativeFlag.SetNice;
  }
  let cgroup: string | null = null;
  if (cgroupOption !== undefined) {
    cgroup = normalizeCgroup(cgroupOption);
    flags |= NativeFlag.SetCgroup;
  }
  const setup = flags & (NativeFlag.DieWithParent | NativeFlag.SetNice) || rlimits.length > 0
    ? childSetup(SIGKILL, nice, rlimits)
    : null;

  const method = methods[o.method ?? 'auto'];
  if (method === undefined || !Object.hasOwn(methods, o.method ?? 'auto')) {
    throw new TypeError(`method must be 'auto', 'posix_spawn', 'vfork' or 'fork', got ${describe(o.method)}`);
  }
  if (method === NativeMethod.PosixSpawn) {
    const cannot = NOT_POSIX_SPAWN.find(([bits]) => (flags & bits) !== 0)?.[1] ?? (rlimits.length > 0 ? 'set rlimits' : null);
    if (cannot !== null) throw new TypeError(`method 'posix_spawn' cannot ${cannot}; use 'auto' or 'vfork'`);
  }

  const timeout = checkMs(o.timeout, 'timeout');
  const forceKillAfter =
    o.forceKillAfter === undefined ? DEFAULT_FORCE_KILL_AFTER : checkMs(o.forceKillAfter, 'forceKillAfter');
  const killSignal = o.killSignal === undefined ? SIGTERM : signalNumber(o.killSignal, 'killSignal');
  // Signal 0 only probes: a timeout would "kill" with it and nothing would happen.
  if (killSignal === 0) throw new TypeError('killSignal must be a real signal, not 0');
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) {
    throw new TypeError(`signal must be an AbortSignal, got ${describe(o.signal)}`);
  }

  return {
    file: file as string, argv, envp, searchPath, cwd, stdio, flags,
    uid: creds.uid, gid: creds.gid, groups: creds.groups, method,
    timeout, killSignal, forceKillAfter, signal: o.signal, processGroup, setup, cgroup, cleanup,
    redirects: null, redirectTexts: null,
  };
}
