// Log lines a peer can cause at will (gearmand's ERROR packets, jobs it
// assigns unasked): a few per minute are worth reading, a flood would fill
// the disk at the peer's rate (40 ERROR packets of 1 MiB wrote 52 MB of log,
// issue 17). Text from the peer is quoted, escaped and bounded as well.
import { quoteText } from '../../util/quote-text';

/** Peer text in a log line: JSON-escaped (no forged lines), at most `max` characters shown. */
export function peerText(value: string | Buffer, max = 200): string {
  const s = typeof value === 'string' ? value : value.toString('latin1', 0, Math.min(value.length, max + 1));
  return quoteText(s, max);
}

export class LogLimit {
  private start = -Infinity;
  private used = 0;
  private held = 0;

  constructor(private readonly perMinute = 20) {}

  /** null: leave this line out; else a note to append (how many were left out before it). */
  pass(now = performance.now()): string | null {
    if (now - this.start >= 60_000) {
      this.start = now;
      this.used = 0;
    }
    if (this.used >= this.perMinute) {
      this.held++;
      return null;
    }
    this.used++;
    const note = this.held > 0 ? ` (${this.held} more like it in the last minute not logged)` : '';
    this.held = 0;
    return note;
  }
}
