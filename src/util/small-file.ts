// A small file the user names (a Mod-Gearman config or key file), read so that
// a name that is not a regular file cannot hang or sink the process: a FIFO
// blocked the worker's event loop on every SIGHUP reload until someone wrote
// to it; /dev/zero or /dev/urandom would be read until memory ran out. A pipe
// is read where the caller allows it (a start: `--config=<(make-config)`),
// without blocking and for 10 s at most, never on a reload, where the loop
// must not wait for a writer.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/** What a file that is not a regular one is, for a message ("is a FIFO, not a regular file"). */
export function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** How long a pipe read at start may take to reach its end: its writer is a command (`<(…)`), not a person. */
const PIPE_DEADLINE_MS = 10_000;

/**
 * Up to `max` + 1 bytes of `fd`, read until EOF. `fd` may be a non-blocking
 * pipe: EAGAIN (a writer that has not written yet) waits a few ms, up to
 * PIPE_DEADLINE_MS, without the open or a read ever blocking — a signal held
 * meanwhile is acted on within that bound. A pipe no one has opened for
 * writing reads as empty at once.
 */
function readUpTo(fd: number, max: number, file: string): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  let deadline = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(65_536, max + 1 - total));
    let n: number;
    try {
      n = readSync(fd, chunk, 0, chunk.length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      deadline ||= Date.now() + PIPE_DEADLINE_MS;
      if (Date.now() > deadline) throw new TypeError(`${file}: the pipe's writer did not finish within ${PIPE_DEADLINE_MS / 1000} s`, { cause: e });
      Atomics.wait(PAUSE, 0, 0, 5);
      continue;
    }
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
    total += n;
    if (total > max) break;
  }
  return Buffer.concat(chunks, total);
}

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * The bytes of `file`, at most `max`. A TypeError (naming the file and what
 * it is) for anything but a regular file — or a pipe when `pipes` — and for
 * a file over `max`; open errors are thrown as they come (ENOENT…).
 */
export function readSmallFile(file: string, options: { max: number; pipes: boolean }): Buffer {
  // O_NONBLOCK: opening a FIFO for reading waits for a writer otherwise, and
  // reading one waits for its data, for ever; the process acts on no signal meanwhile.
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const st = fstatSync(fd);
    if (!st.isFile() && !(options.pipes && st.isFIFO())) {
      throw new TypeError(`${file} is ${kindOf(st)}, not a regular file${st.isFIFO() ? ' (a pipe is read at start only, not on a reload)' : ''}`);
    }
    const data = readUpTo(fd, options.max, file);
    if (data.length > options.max) throw new TypeError(`${file} is larger than ${options.max} bytes`);
    return data;
  } finally {
    closeSync(fd);
  }
}
