// loadChecksFile on a worker thread: what a reload of `noshell run` uses.
// Parsing and validating a large file is long work for the event loop (a
// 15 MiB JSON file of 100,000 checks: ~1 s; YAML parses at ~2.4 s per MiB),
// and the checks scheduled meanwhile, /metrics and the gearman connections
// would wait for it. The thread answers with the file's digest (ids, hashes,
// user/group pairs: checks-digest.ts); the definitions come only when asked
// for, and only those asked for. Answers are plain data (structured clone).
// Where the compiled worker is not beside this file (running from the
// TypeScript sources), the file is loaded on this thread.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ChecksDigest } from './checks-digest';
import type { ChecksFile, FileCheck } from './checks-file-shape';
import { loadChecks } from './checks-file-load';
import { StaleKnown, type KnownChecks } from './checks-known';
import { LoadAborted, localChecksSource, unchangedSource, type ChecksSource, type LastLoad } from './checks-source';

export { LoadAborted, localChecksSource, type ChecksSource, type LastLoad } from './checks-source';

/** What the worker sends (checks-file-worker.ts); it answers 'next-digest' and 'next-checks' (the phase it is in), and `{ want }`. */
export type LoaderMessage =
  | { kind: 'ids'; ids: string[] }
  | { kind: 'pairs'; pairs: ChecksDigest['pairs'] }
  | {
    kind: 'digest'; runner: ChecksFile['runner']; metrics: ChecksFile['metrics']; hashes: Float64Array; pairOf: Uint32Array;
    known: KnownChecks; skipped: number;
  }
  | { kind: 'checks'; checks: FileCheck[] }
  | { kind: 'done' }
  /** The file's bytes are the ones the last load parsed (asked for with `last`). */
  | { kind: 'unchanged' }
  | { kind: 'error'; typeError: boolean; message: string; stale?: boolean };

const WORKER = path.join(__dirname, 'checks-file-worker.js');

/**
 * Loads `file` on a worker thread, up to its digest, knowing what the last
 * load of it learned (`known`: those checks are neither validated nor
 * expanded unless fetched). Aborting `signal`
 * (noshell run is stopping) terminates the thread at once and rejects with
 * LoadAborted, whether the digest or a fetch is awaited: a long parse, or a
 * read stuck on a dead mount, must not hold off the exit. Given `last` (the
 * last load, kept here), bytes that are its bytes are not parsed: the source
 * is that load's (`unchanged`).
 */
export function openChecksFileOffThread(
  file: string, signal?: AbortSignal, known: KnownChecks | null = null, last: LastLoad | null = null,
): Promise<ChecksSource> {
  if (signal?.aborted === true) return Promise.reject(new LoadAborted(`${file}: load aborted`));
  if (!existsSync(WORKER)) return Promise.resolve().then(() => localChecksSource(loadChecks(file, known)));
  return new Promise((resolveOpen, rejectOpen) => {
    // What the thread's messages settle: first the digest, then the one fetch.
    let opening: { reject: (e: Error) => void } | null = { reject: rejectOpen };
    let fetching: { resolve: (c: FileCheck[]) => void; reject: (e: Error) => void } | null = null;
    let ended = false;
    // Why it ended, for a fetch asked for afterwards.
    let failure: Error | null = null;
    const end = (e: Error | null) => {
      if (ended) return;
      ended = true;
      failure = e;
      if (e !== null) (opening ?? fetching)?.reject(e);
      opening = null;
      fetching = null;
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
    };
    // The file's size is capped (16 MiB JSON, 4 MiB YAML): its parse and definitions need a few
    // hundred MB at most. A bound on the thread's heap makes anything past that a failed reload
    // (ERR_WORKER_OUT_OF_MEMORY) rather than the whole process's memory.
    // A check with no hash (NaN: compared in full at every reload) needs its definition anyway: such a file is loaded.
    const sameAsKnown = last !== null && last.known === known && !last.known.defs.some(Number.isNaN);
    const worker = new Worker(WORKER, { workerData: { file, known, sameAsKnown }, resourceLimits: { maxOldGenerationSizeMb: 1024 } });
    const onAbort = () => end(new LoadAborted(`${file}: load aborted`));
    signal?.addEventListener('abort', onAbort, { once: true });
    const ids: string[] = [];
    const pairs: ChecksDigest['pairs'] = [];
    const checks: FileCheck[] = [];
    // Batches on request, asked for in the next turn: a port reads every message that comes
    // while it reads, so an answer asked for at once was read in the same turn, and so on.
    // At most two are on their way (checks-file-worker.ts), so at most two are read in a turn.
    // Tagged with the phase: one asked for in the digest's phase and read after the fetch began is not answered.
    const ask = () => {
      if (opening !== null) worker.postMessage('next-digest');
      else if (fetching !== null) worker.postMessage('next-checks');
    };
    let fetched = false;
    const fetch = (indexes: Uint32Array) => new Promise<FileCheck[]>((resolve, reject) => {
      if (fetched) reject(new Error('fetch: once per source'));
      else if (ended) reject(failure ?? new LoadAborted(`${file}: load aborted`));
      else {
        fetching = { resolve, reject };
        worker.ref();
        worker.postMessage({ want: indexes });
      }
      fetched = true;
    });
    worker.on('message', (m: LoaderMessage) => {
      if (m.kind === 'unchanged' && opening !== null && last !== null) {
        opening = null;
        resolveOpen(unchangedSource(file, last, () => openChecksFileOffThread(file, signal, known, null)));
        end(null);
      } else if (m.kind === 'error') end(m.stale === true ? new StaleKnown(m.message) : m.typeError ? new TypeError(m.message) : new Error(m.message));
      else if (opening !== null && m.kind === 'ids') {
        for (const id of m.ids) ids.push(id);
        setImmediate(ask);
      } else if (opening !== null && m.kind === 'pairs') {
        for (const p of m.pairs) pairs.push(p);
        setImmediate(ask);
      } else if (opening !== null && m.kind === 'digest') {
        opening = null;
        // Idle until fetched from: a source dropped without close() does not keep the process alive.
        worker.unref();
        resolveOpen({
          runner: m.runner,
          metrics: m.metrics,
          digest: { ids, hashes: m.hashes, pairs, pairOf: m.pairOf },
          known: m.known,
          skipped: m.skipped,
          unchanged: false,
          fetch,
          close: () => end(new LoadAborted(`${file}: load aborted`)),
        });
      } else if (fetching !== null && m.kind === 'checks') {
        for (const c of m.checks) checks.push(c);
        setImmediate(ask);
      } else if (fetching !== null && m.kind === 'done') {
        fetching.resolve(checks);
        end(null);
      }
    });
    worker.once('error', (err) => end(new TypeError(`${file}: cannot load: ${err.message}`, { cause: err })));
    worker.once('exit', (code) => end(new TypeError(`${file}: cannot load: the loading thread exited with code ${code}`)));
    // Kept ref'd while it loads or fetches: an unref'd thread let a process with nothing else
    // to do exit before the answer came. A stop does not wait for it: aborting `signal`
    // terminates it.
  });
}

/** The whole file, loaded off the event-loop thread (its digest, then every check). */
export async function loadChecksFileOffThread(file: string, signal?: AbortSignal): Promise<ChecksFile> {
  const source = await openChecksFileOffThread(file, signal);
  try {
    const checks = await source.fetch(Uint32Array.from(source.digest.ids.keys()));
    return { runner: source.runner, metrics: source.metrics, checks };
  } finally {
    source.close();
  }
}
