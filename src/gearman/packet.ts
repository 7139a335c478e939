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
  /** Largest body accepted (default 64 MiB); anything larger is an error. */
  maxBodySize?: number;
}

/**
 * Streaming parser: feed it whatever TCP hands over (any fragmentation) and
 * it returns the complete packets. Chunks are only counted until a whole
 * packet is there and then copied once, so the work is linear in the bytes.
 * After an error the parser stays failed: the caller must drop the connection.
 */
export class PacketParser {
  private readonly expect: Buffer;
  private readonly magic: 'REQ' | 'RES';
  private readonly maxBody: number;
  // Chunks from `head` on are unread; an index, not shift(), keeps reading a
  // packet that arrived one byte at a time linear.
  private chunks: Buffer[] = [];
  private head = 0;
  private buffered = 0;
  private need = HEADER_SIZE;
  private header: { type: number; size: number } | null = null;
  private failed: GearmanProtocolError | null = null;

  constructor(options: PacketParserOptions) {
    this.magic = options.expect;
    this.expect = options.expect === 'REQ' ? REQ : RES;
    this.maxBody = options.maxBodySize ?? 64 * 1024 * 1024;
  }

  /** Returns the packets completed by this chunk; throws GearmanProtocolError on bad input. */
  push(chunk: Buffer): Packet[] {
    if (this.failed !== null) throw this.failed;
    const out: Packet[] = [];
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    try {
      while (this.buffered >= this.need) {
        const data = this.take(this.need);
        if (this.header === null) {
          if (!data.subarray(0, 4).equals(this.expect)) {
            throw new GearmanProtocolError('ERR_GEARMAN_BAD_MAGIC', `bad Gearman magic ${JSON.stringify(data.subarray(0, 4).toString('latin1'))}`);
          }
          const type = data.readUInt32BE(4);
          const size = data.readUInt32BE(8);
          if (ARG_COUNT[type] === undefined) throw new GearmanProtocolError('ERR_GEARMAN_BAD_TYPE', `unknown Gearman packet type ${type}`);
          if (size > this.maxBody) {
            throw new GearmanProtocolError('ERR_GEARMAN_TOO_LARGE', `Gearman packet of ${size} bytes exceeds the limit of ${this.maxBody}`);
          }
          this.header = { type, size };
          this.need = size;
          if (size > 0) continue;
        }
        const { type } = this.header;
        const body = this.header.size === 0 ? Buffer.alloc(0) : data;
        this.header = null;
        this.need = HEADER_SIZE;
        out.push({ magic: this.magic, type, args: splitArgs(type, body) });
      }
    } catch (err) {
      this.failed = err as GearmanProtocolError;
      this.chunks = [];
      this.head = 0;
      this.buffered = 0;
      throw err;
    }
    return out;
  }

  /** Bytes received but not yet part of a complete packet. */
  get pending(): number {
    return this.buffered;
  }

  private take(n: number): Buffer {
    if (n === 0) return Buffer.alloc(0);
    const first = this.chunks[this.head];
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.head++;
      else this.chunks[this.head] = first.subarray(n);
    } else {
      out = Buffer.allocUnsafe(n);
      let at = 0;
      while (at < n) {
        const c = this.chunks[this.head];
        const k = Math.min(c.length, n - at);
        c.copy(out, at, 0, k);
        at += k;
        if (k === c.length) this.head++;
        else this.chunks[this.head] = c.subarray(k);
      }
    }
    this.buffered -= n;
    if (this.head === this.chunks.length) {
      this.chunks = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
    return out;
  }
}
