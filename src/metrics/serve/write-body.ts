// Writing a shared render's chunks to one /metrics response: encoded into a
// bounded buffer the response reuses, each write awaited, the connection
// closed when the client stops taking them, and the writing of every
// response of a server sharing one time budget per turn of the event loop.
import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Reader, SharedRender } from './shared-render';
import type { TurnBudget } from './turn-budget';

/** The encoding buffer of a response, bytes: one per response being written, allocated at its first write. */
const BUFFER_BYTES = 256 * 1024;
/** Bytes of a response's byte chunks written and not yet taken by the socket before a write waits. */
const IN_FLIGHT = 4 * 1024 * 1024;

/**
 * Writes `bytes` and resolves when the socket has taken them (the write's
 * callback) or the response has closed. Meanwhile no progress for
 * `sendTimeout` ms closes the connection (its 'timeout' listener destroys
 * the socket): a client that asks and never reads held its slot forever.
 */
function send(res: http.ServerResponse, socket: Socket, bytes: Buffer | string, sendTimeout: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('close', done);
      socket.setTimeout(0);
      resolve();
    };
    res.on('close', done);
    socket.setTimeout(sendTimeout);
    res.write(bytes, done);
  });
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

/**
 * The render's chunks as they come, written as the socket takes them, each
 * encoded into the response's one buffer (and the render told it was
 * taken). A chunk longer than the buffer can hold is written as it is. A
 * high surrogate that ends a chunk is held for the next one, so a source
 * that cut a pair between chunks still comes out as the one character. A render that fails part way cuts the
 * body off: the client sees an incomplete response, not a shorter one that
 * looks whole. The end is sent with the timeout still armed.
 */
export async function writeBody(
  res: http.ServerResponse, socket: Socket, render: SharedRender, reader: Reader, sendTimeout: number, turns: TurnBudget,
): Promise<void> {
  let buffer: Buffer | null = null;
  let used = 0;
  let carry = '';
  const flush = async () => {
    if (used === 0) return;
    const n = used;
    used = 0;
    await send(res, socket, buffer!.subarray(0, n), sendTimeout);
  };
  // A write's callback resumes this in a later turn, among many other
  // responses' callbacks: the rest of the chunk waits for the shared budget
  // too (encoding on past it held the loop ~118 ms with 64 readers).
  const sent = async (bytes: Buffer | string | null) => {
    if (bytes === null) await flush();
    else await send(res, socket, bytes, sendTimeout);
    if (turns.due && !res.destroyed) await turns.next();
  };
  // Byte chunks written and not yet taken by the socket, oldest first: the
  // render is told a chunk is taken only once it and every byte chunk before
  // it are (a text chunk after a byte chunk in flight let the source reuse
  // the byte chunk's memory while it was being sent: outside review).
  const pending: number[] = [];
  let reached = 0;
  let waiting = false;
  const taken = (at: number) => {
    reached = Math.max(reached, at);
    render.passed(reader, pending.length > 0 ? Math.min(reached, pending[0]) : reached);
  };
  for (let i = 0; ;) {
    if (res.destroyed) return;
    if (i === render.length) {
      if (render.done) break;
      await flush();
      // Writes still in flight while this waits: a client that stopped taking them is closed
      // after sendTimeout (a render made at its pace waited for it, and every reader with it).
      // Only while they are: this reader may wait for one that is slower (a render made at its pace).
      waiting = true;
      if (pending.length > 0) socket.setTimeout(sendTimeout);
      await render.more(i);
      waiting = false;
      socket.setTimeout(0);
      continue;
    }
    if (turns.due) {
      await flush();
      await turns.next();
      continue;
    }
    const chunk = render.chunk(i++);
    if (typeof chunk !== 'string') {
      // Bytes go as they are, after what is in the buffer (and a held surrogate, alone).
      if (carry !== '') {
        if (used + 3 > BUFFER_BYTES) await sent(null);
        if (res.destroyed) return;
        used += (buffer ??= Buffer.allocUnsafeSlow(BUFFER_BYTES)).write(carry, used, 'utf8');
        carry = '';
      }
      if (used > 0) await sent(null);
      if (res.destroyed) return;
      const bytes = chunk instanceof Buffer ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      // Taken once the socket has it: then the source may reuse its memory.
      const index = i - 1;
      pending.push(index);
      const done = () => {
        pending.splice(pending.indexOf(index), 1);
        if (waiting && pending.length === 0) socket.setTimeout(0);
        taken(index + 1);
      };
      // Up to IN_FLIGHT bytes are handed to the socket without waiting for each write to be
      // taken: one write at a time waited a turn of the loop per chunk, and the loop sat idle.
      if (res.writableLength + bytes.length > IN_FLIGHT) {
        await sent(bytes);
        done();
      } else res.write(bytes, done);
      continue;
    }
    let p = chunk;
    if (carry !== '') {
      p = carry + p;
      carry = '';
    }
    if (p.length > 0 && isHighSurrogate(p.charCodeAt(p.length - 1))) {
      carry = p.slice(-1);
      p = p.slice(0, -1);
    }
    // A UTF-16 unit is at most 3 bytes of UTF-8.
    if (p.length * 3 > BUFFER_BYTES) {
      await sent(null);
      if (res.destroyed) return;
      taken(i);
      await sent(p);
      continue;
    }
    if (used + p.length * 3 > BUFFER_BYTES) await sent(null);
    if (res.destroyed) return;
    buffer ??= Buffer.allocUnsafeSlow(BUFFER_BYTES);
    used += buffer.write(p, used, 'utf8');
    taken(i);
  }
  if (render.error !== null) {
    res.destroy();
    return;
  }
  if (carry !== '') {
    // A full buffer has no room for it (it was dropped: outside review).
    if (used + 3 > BUFFER_BYTES) await flush();
    if (res.destroyed) return;
    used += (buffer ??= Buffer.allocUnsafeSlow(BUFFER_BYTES)).write(carry, used, 'utf8');
  }
  await flush();
  if (res.destroyed) return;
  // Until 'finish': Node arms its keep-alive timer then.
  socket.setTimeout(sendTimeout);
  res.end();
}
