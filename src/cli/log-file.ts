// The worker's log: lines appended to a file kept open, or to stderr. The
// file is opened again on reopen() (SIGHUP): logrotate moves the old file
// away and signals us, and writing on to the moved file would fill a disk
// no one looks at.
import { closeSync, openSync, writeSync } from 'node:fs';

/** U+2028/2029 (line breaks to some readers) and the bidi controls that reorder what a terminal shows. */
function isBidiOrSeparator(c: number): boolean {
  return c === 0x2028 || c === 0x2029 || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c === 0x200e || c === 0x200f;
}

/** Longest message kept in one log line. */
export const MAX_LOG_MESSAGE = 4096;

/**
 * One message as one line: control characters (C0, DEL, C1) written as
 * \xNN, line separators and bidi controls as \uNNNN (a newline from a peer
 * or a plugin could forge a line of its own), and the text cut to
 * `max` characters. One scan; the message is returned as it is when clean.
 */
export function logMessage(msg: string, max = MAX_LOG_MESSAGE): string {
  const text = msg.length > max ? msg.slice(0, max) : msg;
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c !== 0x7f && !(c >= 0x80 && c <= 0x9f) && !isBidiOrSeparator(c)) continue;
    out += `${text.slice(from, i)}${c < 0x100 ? `\\x${c.toString(16).padStart(2, '0')}` : `\\u${c.toString(16)}`}`;
    from = i + 1;
  }
  out = from === 0 ? text : out + text.slice(from);
  return msg.length > max ? `${out}… (${msg.length} characters)` : out;
}

export class LogFile {
  private fd = -1;
  private path: string | undefined;

  constructor(path: string | undefined, private readonly fallback: (line: string) => void) {
    this.path = path;
    if (path !== undefined) this.fd = LogFile.open(path);
  }

  get file(): string | undefined {
    return this.path;
  }

  /** Opens `path` (default: the same name again); the old file is closed only once the new one is open. */
  reopen(path: string | undefined = this.path): void {
    const fd = path === undefined ? -1 : LogFile.open(path);
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = fd;
    this.path = path;
  }

  write(line: string): void {
    if (this.fd < 0) return this.fallback(line);
    try {
      writeSync(this.fd, line);
    } catch (err) {
      // A full disk must not stop the worker: say so where someone may see it.
      this.fallback(`[log file ${this.path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}] ${line}`);
    }
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }

  private static open(path: string): number {
    try {
      return openSync(path, 'a', 0o640);
    } catch (err) {
      throw new TypeError(`cannot open log file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
    }
  }
}
