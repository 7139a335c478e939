// The worker's log: lines appended to a file kept open, or to stderr. The
// file is opened again on reopen() (SIGHUP): logrotate moves the old file
// away and signals us, and writing on to the moved file would fill a disk
// no one looks at.
import { closeSync, openSync, writeSync } from 'node:fs';
import { escapeControls } from '../util/control-chars';

/** Longest message kept in one log line. */
export const MAX_LOG_MESSAGE = 4096;

/**
 * One message as one line (a newline from a peer or a plugin could forge a
 * line of its own): control characters, line separators and bidi controls
 * escaped, the text cut to `max` characters (control-chars.ts).
 */
export function logMessage(msg: string, max = MAX_LOG_MESSAGE): string {
  return escapeControls(msg, max);
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
