// Options of a GearmanConnection, each resolved on its own: an option given
// as undefined is absent and gets its default (issue 17: spread over the
// defaults, undefineds made every delay NaN).

export interface ConnectionOptions {
  /** First retry delay (default 100 ms), doubled up to backoffMaxMs (default 5 s). */
  backoffMinMs?: number | undefined;
  backoffMaxMs?: number | undefined;
  maxBodySize?: number | undefined;
  /** Gives up a connect attempt after this long (default 5 s, the C worker's gearman_connection_timeout). */
  connectTimeoutMs?: number | undefined;
  /** A connection up this long without a valid packet also resets the backoff (default 5 s). */
  stableAfterMs?: number | undefined;
  /** Drops a connection whose half-received packet gets no further bytes for this long (default 60 s). */
  partialPacketTimeoutMs?: number | undefined;
  /** Drops a connection whose oldest request marked as expecting an answer waits longer than this (default 30 s; 0: never). */
  answerTimeoutMs?: number | undefined;
  log?: ((level: 'error' | 'info' | 'debug', message: string) => void) | undefined;
}

export interface ResolvedConnectionOptions {
  backoffMinMs: number;
  backoffMaxMs: number;
  maxBodySize: number | undefined;
  connectTimeoutMs: number;
  stableAfterMs: number;
  partialPacketTimeoutMs: number;
  answerTimeoutMs: number;
  log: ConnectionOptions['log'];
}

/** Largest delay a Node timer takes (2^31-1 ms); longer ones fire at once with a warning. */
const MAX_DELAY = 2 ** 31 - 1;

/** Unread bytes past which a peer is taken to have stopped reading: two largest results of the C worker (10 MB each). */
export const MAX_UNREAD = 24 * 1024 * 1024;

/**
 * Bytes waiting in a connection's write buffer past which it is not
 * `writable`: the worker sends no more grabs, the client no more submits, and
 * an unasked job from a peer that does not read drops the connection. Set on
 * the socket rather than left to Node, whose default went from 16 KiB to
 * 64 KiB in Node 22 (issue 18): the same worker buffered four times as much
 * on 22+ before it held back or noticed a gearmand that stopped reading.
 */
export const WRITE_HIGH_WATER_MARK = 16 * 1024;

function ms(value: number | undefined, name: string, dflt: number, min: number): number {
  // Field by field: an option given as undefined is absent, never NaN (issue 17).
  if (value === undefined) return dflt;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > MAX_DELAY) {
    throw new TypeError(`gearman connection: ${name} must be a number of ms from ${min} to ${MAX_DELAY}, got ${String(value)}`);
  }
  return value;
}

/** Every option resolved on its own: `undefined` means the default. */
export function resolveConnectionOptions(o: ConnectionOptions): ResolvedConnectionOptions {
  const backoffMinMs = ms(o.backoffMinMs, 'backoffMinMs', 100, 1);
  const backoffMaxMs = ms(o.backoffMaxMs, 'backoffMaxMs', Math.max(5000, backoffMinMs), backoffMinMs);
  return {
    backoffMinMs, backoffMaxMs, maxBodySize: o.maxBodySize,
    connectTimeoutMs: ms(o.connectTimeoutMs, 'connectTimeoutMs', 5000, 1),
    stableAfterMs: ms(o.stableAfterMs, 'stableAfterMs', 5000, 0),
    partialPacketTimeoutMs: ms(o.partialPacketTimeoutMs, 'partialPacketTimeoutMs', 60_000, 1),
    answerTimeoutMs: ms(o.answerTimeoutMs, 'answerTimeoutMs', 30_000, 0),
    log: o.log,
  };
}

