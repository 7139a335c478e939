import os from 'node:os';

export interface ResourceUsage {
  /** User CPU time of the child (and its reaped descendants), ms. */
  userCpuMs: number;
  systemCpuMs: number;
  /** ru_maxrss in KiB. For posix_spawn/vfork children Linux counts the
   * parent's RSS too: the child shared the parent's memory until execve. */
  maxRssKb: number;
}

export interface ExitStatus {
  pid: number;
  /** 0–255, or null when killed by a signal (or when the status was lost). */
  exitCode: number | null;
  /** 'SIGTERM', … or null. */
  signal: string | null;
  /** Killed because `timeout` ran out. */
  timedOut: boolean;
  /** Killed because the AbortSignal fired. */
  aborted: boolean;
  /** From spawn to reap. */
  durationMs: number;
  rusage: ResourceUsage;
}

const signalNames = new Map<number, string>();
for (const [name, n] of Object.entries(os.constants.signals)) {
  if (!signalNames.has(n)) signalNames.set(n, name);
}

export function signalName(n: number): string {
  return signalNames.get(n) ?? `SIG${n}`;
}

/** The number of a name signalName() gave (real-time signals are `SIG34`…); 0 for null. */
export function signalNumberOf(name: string | null): number {
  if (name === null) return 0;
  const n = (os.constants.signals as Record<string, number>)[name];
  if (n !== undefined) return n;
  const digits = name.startsWith('SIG') ? Number(name.slice(3)) : NaN;
  return Number.isInteger(digits) ? digits : 0;
}

/** Validates a signal given by name or number; returns its number. */
export function signalNumber(value: unknown, option: string): number {
  if (typeof value === 'string') {
    const n = (os.constants.signals as Record<string, number>)[value];
    if (n !== undefined) return n;
    throw new TypeError(`${option}: unknown signal ${JSON.stringify(value)}`);
  }
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < 65) {
    return value;
  }
  throw new TypeError(`${option}: expected a signal name like 'SIGTERM' or a number, got ${String(value)}`);
}
