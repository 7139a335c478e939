// Gearman binary protocol framing: `\0REQ` / `\0RES`, u32 BE type, u32 BE
// body length, NUL-separated arguments (the last one may hold NULs).
export const REQ = Buffer.from('\0REQ', 'latin1');
export const RES = Buffer.from('\0RES', 'latin1');
export const HEADER_SIZE = 12;

export const PacketType = {
  CAN_DO: 1,
  CANT_DO: 2,
  RESET_ABILITIES: 3,
  PRE_SLEEP: 4,
  NOOP: 6,
  SUBMIT_JOB: 7,
  JOB_CREATED: 8,
  GRAB_JOB: 9,
  NO_JOB: 10,
  JOB_ASSIGN: 11,
  WORK_STATUS: 12,
  WORK_COMPLETE: 13,
  WORK_FAIL: 14,
  GET_STATUS: 15,
  ECHO_REQ: 16,
  ECHO_RES: 17,
  SUBMIT_JOB_BG: 18,
  ERROR: 19,
  STATUS_RES: 20,
  SUBMIT_JOB_HIGH: 21,
  SET_CLIENT_ID: 22,
  WORK_EXCEPTION: 25,
  WORK_DATA: 28,
  WORK_WARNING: 29,
  GRAB_JOB_UNIQ: 30,
  JOB_ASSIGN_UNIQ: 31,
  SUBMIT_JOB_HIGH_BG: 32,
  SUBMIT_JOB_LOW: 33,
  SUBMIT_JOB_LOW_BG: 34,
} as const;
export type PacketTypeNumber = (typeof PacketType)[keyof typeof PacketType];

// Arguments per packet type; the body is split into at most this many parts
// so that opaque data (the last argument) may contain NUL bytes.
const ARG_COUNT: Record<number, number> = {
  1: 1, 2: 1, 3: 0, 4: 0, 6: 0, 7: 3, 8: 1, 9: 0, 10: 0, 11: 3, 12: 3, 13: 2, 14: 1, 15: 1, 16: 1, 17: 1,
  18: 3, 19: 2, 20: 5, 21: 3, 22: 1, 25: 2, 28: 2, 29: 2, 30: 0, 31: 4, 32: 3, 33: 3, 34: 3,
};

export interface Packet {
  magic: 'REQ' | 'RES';
  type: number;
  args: Buffer[];
}

/** Thrown (and reported) for bytes that are not a Gearman packet stream. */
export class GearmanProtocolError extends Error {
  readonly code: string;
  constructor(code: 'ERR_GEARMAN_BAD_MAGIC' | 'ERR_GEARMAN_TOO_LARGE' | 'ERR_GEARMAN_BAD_TYPE' | 'ERR_GEARMAN_BAD_ARGS', message: string) {
    super(message);
    this.name = 'GearmanProtocolError';
    this.code = code;
  }
}

export function encodePacket(magic: 'REQ' | 'RES', type: number, args: ReadonlyArray<string | Buffer> = []): Buffer {
  const parts = args.map((a) => (typeof a === 'string' ? Buffer.from(a, 'utf8') : a));
  let size = 0;
  for (let i = 0; i < parts.length; i++) size += parts[i].length + (i > 0 ? 1 : 0);
  const out = Buffer.allocUnsafe(HEADER_SIZE + size);
  (magic === 'REQ' ? REQ : RES).copy(out, 0);
  out.writeUInt32BE(type, 4);
  out.writeUInt32BE(size, 8);
  let at = HEADER_SIZE;
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) out[at++] = 0;
    parts[i].copy(out, at);
    at += parts[i].length;
  }
  return out;
}

export function argCount(type: number): number | undefined {
  return ARG_COUNT[type];
}

function splitArgs(type: number, body: Buffer): Buffer[] {
  const n = ARG_COUNT[type];
  if (n === undefined) throw new GearmanProtocolError('ERR_GEARMAN_BAD_TYPE', `unknown Gearman packet type ${type}`);
  if (n === 0) {
    if (body.length !== 0) throw new GearmanProtocolError('ERR_GEARMAN_BAD_ARGS', `packet type ${type} takes no arguments, got ${body.length} bytes`);
    return [];
  }
  const args: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < n - 1; i++) {
    const nul = body.indexOf(0, start);
    if (nul < 0) throw new GearmanProtocolError('ERR_GEARMAN_BAD_ARGS', `packet type ${type} needs ${n} arguments`);
    args.push(body.subarray(start, nul));
    start = nul + 1;
  }
  args.push(body.subarray(start));
  return args;
}

export interface PacketParserOptions {
  /** Which magic the peer must send ('RES' from a server, 'REQ' from a client). */
  expect: 'REQ' | 'RES';
  /** Largest body accepted (default DEFAULT_MAX_BODY, 16 MiB); anything larger is an error. */
  maxBodySize?: number;
}

/**
 * Default cap on a packet body. The broker module builds a job in a
 * GM_MAX_OUTPUT (10 MiB) buffer; encrypted and base64-encoded that is at most
 * ~13.4 MiB, so 16 MiB takes any job it can send, with room for the handle,
 * queue and unique id. What we read from gearmand is jobs, JOB_CREATED, NOOP
 * and friends, never results. Memory follows the bytes that really arrive
 * (see PacketParser), not the announced size.
 */
export const DEFAULT_MAX_BODY = 16 * 1024 * 1024;

// First allocation for a body that arrives in pieces; grown by doubling.
const MIN_BODY_ALLOC = 16 * 1024;

/**
 * Streaming parser: feed it whatever TCP hands over (any fragmentation) and
 * it returns the complete packets. A body that arrives whole in one chunk is
 * a view of that chunk; one that arrives in pieces is copied into a single
 * buffer as the pieces come (grown by doubling up to the announced size), so
 * the work is linear in the bytes and the memory at most about twice the
 * bytes received, whatever the chunk sizes and whatever size was announced.
 * After an error the parser stays failed: the caller must drop the connection.
 */
export class PacketParser {
  private readonly expect: Buffer;
  private readonly magic: 'REQ' | 'RES';
  private readonly maxBody: number;
  private readonly headerBuf = Buffer.alloc(HEADER_SIZE);
  private headerFill = 0;
  private header: { type: number; size: number } | null = null;
  private body: Buffer | null = null;
  private bodyFill = 0;
  private failed: GearmanProtocolError | null = null;

  constructor(options: PacketParserOptions) {
    this.magic = options.expect;
    this.expect = options.expect === 'REQ' ? REQ : RES;
    this.maxBody = options.maxBodySize ?? DEFAULT_MAX_BODY;
  }

  /** Returns the packets completed by this chunk; throws GearmanProtocolError on bad input. */
  push(chunk: Buffer): Packet[] {
    if (this.failed !== null) throw this.failed;
    const out: Packet[] = [];
    let off = 0;
    try {
      while (true) {
        if (this.header === null) {
          let head: Buffer;
          if (this.headerFill === 0 && chunk.length - off >= HEADER_SIZE) {
            head = chunk.subarray(off, off + HEADER_SIZE);
            off += HEADER_SIZE;
          } else {
            const k = Math.min(HEADER_SIZE - this.headerFill, chunk.length - off);
            chunk.copy(this.headerBuf, this.headerFill, off, off + k);
            this.headerFill += k;
            off += k;
            if (this.headerFill < HEADER_SIZE) break;
            this.headerFill = 0;
            head = this.headerBuf;
          }
          this.header = this.parseHeader(head);
          if (this.header.size === 0) {
            out.push(this.finish(Buffer.alloc(0)));
            continue;
          }
        }
        const size = this.header.size;
        const left = chunk.length - off;
        if (this.bodyFill === 0 && left >= size) {
          const body = chunk.subarray(off, off + size);
          off += size;
          out.push(this.finish(body));
          continue;
        }
        if (left === 0) break;
        const k = Math.min(size - this.bodyFill, left);
        this.reserve(this.bodyFill + k, size);
        chunk.copy(this.body!, this.bodyFill, off, off + k);
        this.bodyFill += k;
        off += k;
        if (this.bodyFill < size) break;
        const body = this.body!;
        this.body = null;
        this.bodyFill = 0;
        out.push(this.finish(body));
      }
    } catch (err) {
      this.failed = err as GearmanProtocolError;
      this.header = null;
      this.body = null;
      this.bodyFill = 0;
      this.headerFill = 0;
      throw err;
    }
    return out;
  }

  /** Bytes received but not yet part of a complete packet. */
  get pending(): number {
    return this.header === null ? this.headerFill : HEADER_SIZE + this.bodyFill;
  }

  private parseHeader(data: Buffer): { type: number; size: number } {
    if (!data.subarray(0, 4).equals(this.expect)) {
      throw new GearmanProtocolError('ERR_GEARMAN_BAD_MAGIC', `bad Gearman magic ${JSON.stringify(data.subarray(0, 4).toString('latin1'))}`);
    }
    const type = data.readUInt32BE(4);
    const size = data.readUInt32BE(8);
    if (ARG_COUNT[type] === undefined) throw new GearmanProtocolError('ERR_GEARMAN_BAD_TYPE', `unknown Gearman packet type ${type}`);
    if (size > this.maxBody) {
      throw new GearmanProtocolError('ERR_GEARMAN_TOO_LARGE', `Gearman packet of ${size} bytes exceeds the limit of ${this.maxBody}`);
    }
    return { type, size };
  }

  /** Makes room for `need` body bytes: doubling, never past the announced `size`. */
  private reserve(need: number, size: number): void {
    const cap = this.body?.length ?? 0;
    if (need <= cap) return;
    const next = Math.min(size, Math.max(need, cap * 2, MIN_BODY_ALLOC));
    const grown = Buffer.allocUnsafe(next);
    if (this.body !== null) this.body.copy(grown, 0, 0, this.bodyFill);
    this.body = grown;
  }

  private finish(body: Buffer): Packet {
    const { type } = this.header!;
    this.header = null;
    return { magic: this.magic, type, args: splitArgs(type, body) };
  }
}
