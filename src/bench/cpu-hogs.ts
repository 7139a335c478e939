// CPU hogs beside a benchmark (--load): one busy process per core of a
// two-core machine, so that every figure can be read under load as well as
// quiet. Each hog ends with the benchmark, even one that is killed: it looks
// at its parent every few milliseconds and leaves when it changes.
import cp from 'node:child_process';

const HOG = 'const p = process.ppid; let x = 0; for (;;) { for (let i = 0; i < 2e6; i++) x = (x + i) | 0; if (process.ppid !== p) process.exit(x & 0); }';

export interface Hogs {
  /** How many run. */
  readonly count: number;
  /** SIGKILLs every hog (idempotent). */
  stop(): void;
}

export function startHogs(count = 2): Hogs {
  const kids = Array.from({ length: count }, () => cp.spawn(process.execPath, ['-e', HOG], { stdio: 'ignore' }));
  for (const k of kids) k.unref();
  return {
    count,
    stop: () => {
      for (const k of kids) if (k.exitCode === null && k.signalCode === null) k.kill('SIGKILL');
    },
  };
}
