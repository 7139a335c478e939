// The body of the worker thread that loads a checks file for a reload
// (checks-file-thread.ts): read, parse, validate and expand off the event
// loop, then answer in batches, one per request of the main thread (after
// the first two), so that no single message takes long to deserialize there
// (the whole of 100,000 checks in one message held its event loop ~420 ms),
// and one is always on its way: first the ids and the digest, then, when
// asked for them, the checks at the indexes asked for.
// An error goes back as the TypeError's message.
import { parentPort, workerData, type Transferable } from 'node:worker_threads';
import { digestChecks } from './checks-digest';
import { loadChecksFile, type ChecksFile } from './checks-file';
import type { LoaderMessage } from './checks-file-thread';

/** Checks per message: ~125 KB of definitions, 1-3 ms to deserialize; two may be read in one turn. */
const BATCH = 1000;
/** Ids per message: ~20 B each. */
const ID_BATCH = 10_000;

const port = parentPort!;
const { file } = workerData as { file: string };

function* digestMessages(loaded: ChecksFile): Generator<[LoaderMessage, Transferable[]]> {
  const { ids, hashes, pairs, pairOf } = digestChecks(loaded.checks);
  for (let i = 0; i < ids.length; i += ID_BATCH) yield [{ kind: 'ids', ids: ids.slice(i, i + ID_BATCH) }, []];
  yield [{ kind: 'digest', runner: loaded.runner, metrics: loaded.metrics, hashes, pairs, pairOf }, [hashes.buffer as ArrayBuffer, pairOf.buffer as ArrayBuffer]];
}

function* checkMessages(loaded: ChecksFile, want: Uint32Array): Generator<[LoaderMessage, Transferable[]]> {
  for (let i = 0; i < want.length; i += BATCH) {
    yield [{ kind: 'checks', checks: Array.from(want.subarray(i, i + BATCH), (k) => loaded.checks[k]) }, []];
  }
  yield [{ kind: 'done' }, []];
}

let loaded: ChecksFile | null = null;
try {
  loaded = loadChecksFile(file);
} catch (err) {
  const e = err as Error;
  port.postMessage({ kind: 'error', typeError: e instanceof TypeError, message: String(e.message) } satisfies LoaderMessage);
}
if (loaded !== null) {
  const file = loaded;
  let messages: Generator<[LoaderMessage, Transferable[]]> = digestMessages(file);
  const send = () => {
    const next = messages.next();
    if (next.done !== true) port.postMessage(next.value[0], next.value[1]);
  };
  port.on('message', (m: 'next' | { want: Uint32Array }) => {
    if (m === 'next') send();
    else {
      // Indexes the digest gave: out of range, or not ascending, is a bug of the asker.
      const n = file.checks.length;
      for (let i = 0; i < m.want.length; i++) {
        if (m.want[i] >= n || (i > 0 && m.want[i] <= m.want[i - 1])) {
          port.postMessage({ kind: 'error', typeError: false, message: `fetch: bad index ${m.want[i]}` } satisfies LoaderMessage);
          return;
        }
      }
      messages = checkMessages(file, m.want);
      send();
      send();
    }
  });
  // Two ahead: the next batch is being copied here while the main thread reads one.
  send();
  send();
}
