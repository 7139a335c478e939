// Drivers: one operation each (run the command, capture stdout, wait for the
// exit), with the synchronous part timed: that is how long the event loop is
// blocked per spawn.
import cp from 'node:child_process';
import { runCheck } from '../../check/run-check';
import { _setLoopOnly, exec, execFile } from '../../process/exec';
import type { SpawnMethod } from '../../process/options';
import { spawn } from '../../process/spawn';

export type Op = (argv: string[]) => Promise<void>;

export interface Driver {
  id: string;
  /** Builds the operation; `blocked` collects ms spent in the synchronous call. */
  make(blocked: number[]): Op;
  /** Whether it can run concurrently (spawnSync cannot). */
  concurrent: boolean;
}

function shellQuote(argv: string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** A concurrent driver whose synchronous part is `start`'s call. */
function timed(id: string, start: (argv: string[]) => Promise<unknown>): Driver {
  return {
    id,
    concurrent: true,
    make: (blocked) => async (argv) => {
      const t = performance.now();
      const p = start(argv);
      blocked.push(performance.now() - t);
      await p;
    },
  };
}

function noshellExecFile(method: SpawnMethod): Driver {
  const id = method === 'auto' ? 'noshell.execFile' : `noshell.execFile[${method}]`;
  return timed(id, (argv) => execFile(argv[0], argv.slice(1), { method }));
}

/** The same call spawning on the event-loop thread, as before the executor. */
function onLoop(argv: string[]): Promise<unknown> {
  const was = _setLoopOnly(true);
  try {
    return execFile(argv[0], argv.slice(1));
  } finally {
    _setLoopOnly(was);
  }
}

function drain(stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.on('data', () => {});
    stream.on('end', resolve);
    stream.on('error', reject);
  });
}

export const drivers: Record<string, Driver> = {
  'noshell.execFile': noshellExecFile('auto'),
  'noshell.execFile[loop]': timed('noshell.execFile[loop]', onLoop),
  'noshell.execFile[posix_spawn]': noshellExecFile('posix_spawn'),
  'noshell.execFile[vfork]': noshellExecFile('vfork'),
  'noshell.execFile[fork]': noshellExecFile('fork'),
  'noshell.exec': {
    id: 'noshell.exec',
    concurrent: true,
    make: (blocked) => async (argv) => {
      const command = argv.join(' ');
      const t = performance.now();
      const p = exec(command);
      blocked.push(performance.now() - t);
      await p;
    },
  },
  'noshell.runCheck': {
    id: 'noshell.runCheck',
    concurrent: true,
    make: (blocked) => async (argv) => {
      const t = performance.now();
      const p = runCheck(argv);
      blocked.push(performance.now() - t);
      const r = await p;
      if (r.state === 3 && r.exitCode !== 3) throw new Error(`runCheck: ${r.output}`);
    },
  },
  'noshell.spawn': {
    id: 'noshell.spawn',
    concurrent: true,
    make: (blocked) => async (argv) => {
      const t = performance.now();
      const child = spawn(argv[0], argv.slice(1), { stdin: 'ignore', stderr: 'ignore' });
      blocked.push(performance.now() - t);
      await Promise.all([drain(child.stdout!), child.exited]);
    },
  },
  'cp.exec': {
    id: 'cp.exec',
    concurrent: true,
    make: (blocked) => (argv) => {
      const command = shellQuote(argv);
      return new Promise((resolve, reject) => {
        const t = performance.now();
        cp.exec(command, (err) => (err ? reject(err) : resolve()));
        blocked.push(performance.now() - t);
      });
    },
  },
  'cp.execFile': {
    id: 'cp.execFile',
    concurrent: true,
    make: (blocked) => (argv) =>
      new Promise((resolve, reject) => {
        const t = performance.now();
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- an Error; @types/node declares ExecFileException through Omit<>
        cp.execFile(argv[0], argv.slice(1), (err) => (err ? reject(err) : resolve()));
        blocked.push(performance.now() - t);
      }),
  },
  'cp.spawn': {
    id: 'cp.spawn',
    concurrent: true,
    make: (blocked) => (argv) =>
      new Promise((resolve, reject) => {
        const t = performance.now();
        const child = cp.spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] });
        blocked.push(performance.now() - t);
        child.stdout.on('data', () => {});
        child.on('error', reject);
        child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
      }),
  },
  'cp.spawnSync': {
    id: 'cp.spawnSync',
    concurrent: false,
    make: (blocked) => async (argv) => {
      const t = performance.now();
      const r = cp.spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] });
      blocked.push(performance.now() - t);
      if (r.status !== 0) throw new Error(`exit ${r.status}`);
    },
  },
};
