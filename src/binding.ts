// The one typed boundary between TypeScript and the native addon.
import path from 'node:path';
import nodeGypBuild from 'node-gyp-build';

/** Mirrors noshell_method_t in native/spawn.h. */
export enum NativeMethod { Auto = 0, PosixSpawn = 1, Vfork = 2, Fork = 3 }

/** Mirrors noshell_stdio_kind_t in native/spawn.h. */
export enum NativeStdio { Pipe = 0, Ignore = 1, Inherit = 2, Fd = 3, Stdout = 4 }

/** Mirrors the NOSHELL_* flags in native/spawn.h. */
export enum NativeFlag { NewProcessGroup = 1, SetUid = 2, SetGid = 4 }

/** Called once when the child is reaped. exitCode -1 with signal 0: the
 * status was lost (another part of the process reaped the child). */
export type NativeExitCallback = (
  exitCode: number, signal: number, userUs: number, systemUs: number, maxRssKb: number,
) => void;

/** Opaque handle of a watched child (a napi External). */
export type NativeWatch = { readonly __brand: 'NativeWatch' };

export interface NativeBinding {
  /**
   * Starts a child. `out` receives [errno, step, pid, stdinFd, stdoutFd, stderrFd]:
   * errno 0 means the child runs and the return value watches it.
   */
  spawn(
    file: string,
    argv: readonly string[],
    envp: readonly string[] | null,
    searchPath: string | null,
    cwd: string | null,
    stdio: Int32Array,
    flags: number,
    uid: number,
    gid: number,
    method: NativeMethod,
    onExit: NativeExitCallback,
    out: Int32Array,
  ): NativeWatch | undefined;
  ref(watch: NativeWatch): void;
  unref(watch: NativeWatch): void;
  /** Names of noshell_step_t values, by index. */
  readonly steps: readonly string[];
}

export const binding: NativeBinding = nodeGypBuild(path.join(__dirname, '..')) as NativeBinding;
