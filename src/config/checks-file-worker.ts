// The body of the worker thread that loads a checks file for a reload
// (checks-file-thread.ts): read, parse, validate and expand off the event
// loop (knowing the checks the last load had: checks-file-load.ts), then
// answer in batches, one per request of the main thread (after
// the first two), so that no single message takes long to deserialize there
// (the whole of 100,000 checks in one message held its event loop ~420 ms),
// and one is always on its way: first the ids, the user/group pairs and the
// digest, then, when asked for them, the checks at the indexes asked for.
// An error goes back as the TypeError's message. Asked to, it reads the
// file's bytes first and, when they are the bytes the last load parsed
// (their SHA-256), answers only that: the main thread kept that load's digest.
import { parentPort, workerData, type Transferable } from 'node:worker_threads';
import { loadChecks, type LoadedChecks } from './checks-file-load';
import { readChecksBytes } from './checks-file-text';
import { badIndexes } from './checks-digest';
import { StaleKnown, type KnownChecks } from './checks-known';
import { batchRanges as ranges } from './message-batches';
import type { LoaderMessage } from './checks-file-thread';

type Out = [LoaderMessage, Transferable[]];

function* digestMessages(loaded: LoadedChecks): Generator<Out> {
  const { digest: { ids, hashes, pairs, pairOf }, known } = loaded;
  // Counted with a little for each string's own cost.
  for (const [a, b] of ranges(ids.length, (i) => ids[i].length + 16)) yield [{ kind: 'ids', ids: ids.slice(a, b) }, []];
  for (const [a, b] of ranges(pairs.length, (i) => (pairs[i].user?.length ?? 0) + (pairs[i].group?.length ?? 0) + 32)) {
    yield [{ kind: 'pairs', pairs: pairs.slice(a, b) }, []];
  }
  yield [
    { kind: 'digest', runner: loaded.runner, metrics: loaded.metrics, hashes, pairOf, known, skipped: loaded.skipped },
    [hashes.buffer as ArrayBuffer, pairOf.buffer as ArrayBuffer, known.raw.buffer as ArrayBuffer, known.defs.buffer as ArrayBuffer],
  ];
}

function* checkMessages(loaded: LoadedChecks, want: Uint32Array): Generator<Out> {
  // A check known from the last load is validated and expanded here, as it is asked for.
  for (const [a, b] of ranges(want.length, (k) => loaded.size(want[k]) + 64)) {
    yield [{ kind: 'checks', checks: Array.from(want.subarray(a, b), (k) => loaded.check(k)) }, []];
  }
  yield [{ kind: 'done' }, []];
}

const port = parentPort!;
const { file, known, sameAsKnown } = workerData as { file: string; known: KnownChecks | null; sameAsKnown: boolean };
const fail = (err: unknown) => {
  const e = err as Error;
  port.postMessage({ kind: 'error', typeError: e instanceof TypeError, message: String(e.message), stale: e instanceof StaleKnown } satisfies LoaderMessage);
};
let loaded: LoadedChecks | null = null;
try {
  const read = readChecksBytes(file);
  if (sameAsKnown && known !== null && known.file !== '' && read.sha256 === known.file) port.postMessage({ kind: 'unchanged' } satisfies LoaderMessage);
  else loaded = loadChecks(file, known, read);
} catch (err) {
  fail(err);
}
if (loaded !== null) {
  const file = loaded;
  const n = file.digest.ids.length;
  let phase: 'next-digest' | 'next-checks' = 'next-digest';
  let messages: Generator<Out> = digestMessages(file);
  const send = () => {
    let next: IteratorResult<Out>;
    try {
      next = messages.next();
    } catch (err) {
      fail(err);
      return;
    }
    if (next.done !== true) port.postMessage(next.value[0], next.value[1]);
  };
  port.on('message', (m: 'next-digest' | 'next-checks' | { want: Uint32Array }) => {
    if (typeof m === 'string') {
      // A request of the phase before (sent as the fetch began) is not answered: two on their way at most.
      if (m === phase) send();
      return;
    }
    // Indexes the digest gave: out of range, or not ascending, is a bug of the asker.
    const bad = badIndexes(m.want, n);
    if (bad !== null) {
      port.postMessage({ kind: 'error', typeError: false, message: bad } satisfies LoaderMessage);
      return;
    }
    phase = 'next-checks';
    messages = checkMessages(file, m.want);
    // Two ahead: the next batch is being copied here while the main thread reads one.
    send();
    send();
  });
  send();
  send();
}
