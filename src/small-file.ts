// A small file the user names (a Mod-Gearman config or key file), read so that
// a name that is not a regular file cannot hang or sink the process: a FIFO
// blocked the worker's event loop on every SIGHUP reload until someone wrote
// to it; /dev/zero or /dev/urandom would be read until memory ran out. A pipe
// is read where the caller allows it (a start: `--config=<(make-config)`),
// never on a reload, where the loop must not wait for a writer.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a pipe (FIFO)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/** Up to `max` + 1 bytes of `fd`, read until EOF. */
function readUpTo(fd: number, max: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(65_536, max + 1 - total));
    const n = readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
    total += n;
    if (total > max) break;
  }
  return Buffer.concat(chunks, total);
}

/**
 * The bytes of `file`, at most `max`. A TypeError (naming the file and what
 * it is) for anything but a regular file — or a pipe when `pipes` — and for
 * a file over `max`; open errors are thrown as they come (ENOENT…).
 */
export function readSmallFile(file: string, options: { max: number; pipes: boolean }): Buffer {
  // O_NONBLOCK: opening a FIFO for reading waits for a writer otherwise.
  let fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) {
      if (!(options.pipes && st.isFIFO())) {
        throw new TypeError(`${file} is ${kindOf(st)}, not a regular file${st.isFIFO() ? ' (a pipe is read at start only, not on a reload)' : ''}`);
      }
      // A pipe at start: read it as a blocking one, to its writer's end.
      closeSync(fd);
      fd = -1;
      fd = openSync(file, constants.O_RDONLY | constants.O_NOCTTY);
    }
    const data = readUpTo(fd, options.max);
    if (data.length > options.max) throw new TypeError(`${file} is larger than ${options.max} bytes`);
    return data;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}
