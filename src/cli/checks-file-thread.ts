// loadChecksFile on a worker thread: what a reload of `noshell run` uses.
// Parsing and validating a large file is long work for the event loop (a
// 15 MiB JSON file of 100,000 checks: ~1 s; YAML parses at ~2.4 s per MiB),
// and the checks scheduled meanwhile, /metrics and the gearman connections
// would wait for it. The worker's answer is plain data (structured clone).
// Where the compiled worker is not beside this file (running from the
// TypeScript sources), the file is loaded on this thread.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { loadChecksFile, type ChecksFile } from './checks-file';

type Message =
  | { kind: 'batch'; checks: ChecksFile['checks'] }
  | { kind: 'done'; runner: ChecksFile['runner']; metrics: ChecksFile['metrics'] }
  | { kind: 'error'; typeError: boolean; message: string };

const WORKER = path.join(__dirname, 'checks-file-worker.js');

/** The reason a load aborted by its signal rejects with. */
export class LoadAborted extends Error {}

/**
 * Loads `file` on a worker thread. Aborting `signal` (noshell run is
 * stopping) terminates the thread at once and rejects with LoadAborted: a
 * long parse, or a read stuck on a dead mount, must not hold off the exit.
 */
export function loadChecksFileOffThread(file: string, signal?: AbortSignal): Promise<ChecksFile> {
  if (signal?.aborted === true) return Promise.reject(new LoadAborted(`${file}: load aborted`));
  if (!existsSync(WORKER)) return Promise.resolve().then(() => loadChecksFile(file));
  return new Promise((resolve, reject) => {
    let answered = false;
    // The file's size is capped (16 MiB JSON, 4 MiB YAML): its parse and definitions need a few
    // hundred MB at most. A bound on the thread's heap makes anything past that a failed reload
    // (ERR_WORKER_OUT_OF_MEMORY) rather than the whole process's memory.
    const worker = new Worker(WORKER, { workerData: { file }, resourceLimits: { maxOldGenerationSizeMb: 1024 } });
    const onAbort = () => {
      if (!answered) reject(new LoadAborted(`${file}: load aborted`));
      answered = true;
      void worker.terminate();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const checks: ChecksFile['checks'] = [];
    // Batches on request, asked for in the next turn: a port reads every message that comes
    // while it reads, so an answer asked for at once was read in the same turn, and so on.
    // At most two are on their way (checks-file-worker.ts), so at most two are read in a turn.
    const ask = () => {
      if (!answered) worker.postMessage('next');
    };
    worker.on('message', (m: Message) => {
      if (answered) return;
      if (m.kind === 'batch') {
        for (const c of m.checks) checks.push(c);
        setImmediate(ask);
        return;
      }
      answered = true;
      if (m.kind === 'done') resolve({ runner: m.runner, metrics: m.metrics, checks });
      else reject(m.typeError ? new TypeError(m.message) : new Error(m.message));
      void worker.terminate();
    });
    worker.once('error', (err) => {
      if (!answered) reject(new TypeError(`${file}: cannot load: ${err.message}`, { cause: err }));
      answered = true;
    });
    worker.once('exit', (code) => {
      signal?.removeEventListener('abort', onAbort);
      if (!answered) reject(new TypeError(`${file}: cannot load: the loading thread exited with code ${code}`));
      answered = true;
    });
    // Kept ref'd while it loads: an unref'd thread let a process with nothing else to do exit
    // before the answer came. A stop does not wait for it: aborting `signal` terminates it.
  });
}
