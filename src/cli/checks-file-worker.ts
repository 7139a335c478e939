// The body of the worker thread that loads a checks file for a reload
// (checks-file-thread.ts): read, parse, validate and expand off the event
// loop, and post the result (plain data) or the TypeError's message back.
import { parentPort, workerData } from 'node:worker_threads';
import { loadChecksFile } from './checks-file';

const { file } = workerData as { file: string };
try {
  parentPort!.postMessage({ ok: true, loaded: loadChecksFile(file) });
} catch (err) {
  const e = err as Error;
  parentPort!.postMessage({ ok: false, typeError: e instanceof TypeError, message: String(e.message) });
}
