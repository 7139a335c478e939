// The lines of a child's output as an async iterable: one stream's
// (readline: \n or \r\n ends a line; a last line without one still comes),
// or two streams' lines interleaved in the order they arrive. Two pipes keep
// no order between them: a line of stdout and one of stderr written at
// nearly the same moment may come either way round; each stream's own lines
// keep their order. A consumer that breaks off closes the pipes, as `head`
// does in a shell pipeline: the child's next write gets EPIPE (SIGPIPE), and
// a child blocked on a full pipe is not left waiting for a reader.
import type { Readable } from 'node:stream';
import { createInterface } from 'node:readline';

/** Which output lines() reads. */
export type LinesOf = 'stdout' | 'stderr' | 'both';

export async function* streamLines(stream: Readable): AsyncGenerator<string, void, undefined> {
  const rl = createInterface({ input: stream, crlfDelay: Infinity });
  let ended = false;
  try {
    for await (const line of rl) yield line;
    ended = true;
  } finally {
    if (!ended) {
      rl.close();
      stream.destroy();
    }
  }
}

/** The lines of both streams as they arrive; breaking off closes both. */
export async function* interleavedLines(a: Readable, b: Readable): AsyncGenerator<string, void, undefined> {
  const rls = [a, b].map((input) => createInterface({ input, crlfDelay: Infinity }));
  const its = rls.map((rl) => rl[Symbol.asyncIterator]());
  const next = (i: number) => its[i].next().then((r) => ({ i, r }));
  const pending = new Map([[0, next(0)], [1, next(1)]]);
  try {
    while (pending.size > 0) {
      const { i, r } = await Promise.race(pending.values());
      if (r.done === true) {
        pending.delete(i);
        continue;
      }
      pending.set(i, next(i));
      yield r.value;
    }
  } finally {
    if (pending.size > 0) {
      // Closing the readers settles a read waiting on a quiet stream; then the pipes go.
      for (const rl of rls) rl.close();
      await Promise.allSettled(pending.values());
      a.destroy();
      b.destroy();
    }
  }
}
