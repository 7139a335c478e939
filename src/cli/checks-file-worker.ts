// The body of the worker thread that loads a checks file for a reload
// (checks-file-thread.ts): read, parse, validate and expand off the event
// loop, then hand the checks over in batches, one per request of the main
// thread (after the first two), so that no single message takes long to
// deserialize there (the whole of 100,000 checks in one message held its
// event loop ~420 ms), and one is always on its way.
// An error goes back as the TypeError's message.
import { parentPort, workerData } from 'node:worker_threads';
import { loadChecksFile, type ChecksFile } from './checks-file';

/** Checks per message: ~125 KB of definitions, 1-3 ms to deserialize; two may be read in one turn. */
const BATCH = 1000;

const port = parentPort!;
const { file } = workerData as { file: string };
let loaded: ChecksFile | null = null;
try {
  loaded = loadChecksFile(file);
} catch (err) {
  const e = err as Error;
  port.postMessage({ kind: 'error', typeError: e instanceof TypeError, message: String(e.message) });
}
if (loaded !== null) {
  const { runner, metrics, checks } = loaded;
  let next = 0;
  let done = false;
  const send = () => {
    if (done) return;
    if (next < checks.length) {
      port.postMessage({ kind: 'batch', checks: checks.slice(next, next + BATCH) });
      next += BATCH;
    } else {
      port.postMessage({ kind: 'done', runner, metrics });
      port.off('message', send);
      done = true;
    }
  };
  port.on('message', send);
  // Two ahead: the next batch is being copied here while the main thread reads one.
  send();
  send();
}
