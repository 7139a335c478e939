// CPU hogs beside a benchmark (--load): one busy process per core of a
// two-core machine, so that every figure can be read under load as well as
// quiet. Each hog ends with the benchmark, even one that is killed: it is
// given the benchmark's pid and leaves as soon as its parent is another
// (also when the benchmark died while the hog was still starting).
import cp from 'node:child_process';

const HOG = 'const p = Number(process.argv[1]); let x = 0; for (;;) { if (process.ppid !== p) process.exit(x & 0); ' +
  'for (let i = 0; i < 2e6; i++) x = (x + i) | 0; }';

/** A hog's arguments to node: it runs while its parent is `parent`. */
export function hogArgs(parent: number): string[] {
  return ['-e', HOG, String(parent)];
}

export interface Hogs {
  /** Their pids. */
  readonly pids: readonly number[];
  /** SIGKILLs every hog (idempotent). */
  stop(): void;
}

/** Starts `count` hogs; rejects (with none left running) if one cannot be started. */
export async function startHogs(count = 2): Promise<Hogs> {
  const kids = Array.from({ length: count }, () => cp.spawn(process.execPath, hogArgs(process.pid), { stdio: 'ignore' }));
  const stop = () => {
    for (const k of kids) if (k.pid !== undefined && k.exitCode === null && k.signalCode === null) k.kill('SIGKILL');
  };
  try {
    await Promise.all(kids.map((k) => new Promise<void>((resolve, reject) => {
      k.once('spawn', resolve);
      k.once('error', reject);
    })));
  } catch (err) {
    stop();
    throw new Error(`--load: a CPU hog could not be started: ${(err as Error).message}`, { cause: err });
  }
  for (const k of kids) k.unref();
  return { pids: kids.map((k) => k.pid!), stop };
}
