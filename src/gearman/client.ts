// Gearman client for background jobs: results and check jobs go to the first
// connected server; while none is, they wait in a bounded queue and are sent
// once one is back. A job counts as sent when the server answers JOB_CREATED.
// At most maxInFlight jobs per connection wait for that answer, and none is
// written while the socket's buffer is full; the maxQueued / maxQueuedBytes
// bound covers queued and in-flight jobs together, so a server that accepts
// and never reads holds the client to that bound.
import { randomUUID } from 'node:crypto';
import { GearmanConnection, type ConnectionOptions, type ServerAddress } from './protocol/connection';
import { LogLimit, peerText } from './protocol/log-limit';
import { PacketType, type Packet } from './protocol/packet';

export type Priority = 'normal' | 'high' | 'low';

const SUBMIT: Record<Priority, number> = {
  normal: PacketType.SUBMIT_JOB_BG,
  high: PacketType.SUBMIT_JOB_HIGH_BG,
  low: PacketType.SUBMIT_JOB_LOW_BG,
};

interface Pending {
  queue: string;
  unique: string;
  data: string;
  type: number;
  bytes: number;
}

export interface ClientOptions extends ConnectionOptions {
  /** Jobs kept while no server takes them (default 10,000); past it the oldest are dropped and counted. */
  maxQueued?: number | undefined;
  /** Bytes kept likewise (default 64 MiB). Both bounds count queued and in-flight jobs together. */
  maxQueuedBytes?: number | undefined;
  /** Jobs written to one connection and not yet answered (JOB_CREATED / ERROR), at most (default 256). */
  maxInFlight?: number | undefined;
}

export interface ClientStats {
  submitted: number;
  queued: number;
  inFlight: number;
  /** Bytes held for queued plus in-flight jobs (the quantity maxQueuedBytes bounds). */
  bytes: number;
  dropped: number;
  reconnects: number;
}

export class GearmanClient {
  private readonly conns: GearmanConnection[];
  private readonly inflight = new Map<GearmanConnection, Pending[]>();
  private queue: Pending[] = [];
  private queuedBytes = 0;
  private inflightCount = 0;
  private inflightBytes = 0;
  private readonly maxQueued: number;
  private readonly maxBytes: number;
  private readonly window: number;
  private waiters: Array<() => void> = [];
  private readonly log: ClientOptions['log'];
  private readonly refusals = new LogLimit();
  submitted = 0;
  dropped = 0;

  constructor(servers: readonly ServerAddress[], options: ClientOptions = {}) {
    if (servers.length === 0) throw new TypeError('GearmanClient: at least one server is needed');
    this.maxQueued = options.maxQueued ?? 10_000;
    this.maxBytes = options.maxQueuedBytes ?? 64 * 1024 * 1024;
    this.window = Math.max(1, Math.min(options.maxInFlight ?? 256, this.maxQueued));
    this.log = options.log;
    this.conns = servers.map((s) => {
      const c = new GearmanConnection(s, options);
      this.inflight.set(c, []);
      c.on('connect', () => this.pump());
      c.on('drain', () => this.pump());
      c.on('packet', (p) => this.onPacket(c, p));
      c.on('disconnect', () => {
        // Unacknowledged jobs go back to the front; gearmand coalesces a
        // resubmission by its unique id if the first one did arrive.
        const lost = this.inflight.get(c)!;
        this.inflight.set(c, []);
        for (const p of lost) {
          this.queuedBytes += p.bytes;
          this.inflightBytes -= p.bytes;
        }
        this.inflightCount -= lost.length;
        this.queue = [...lost, ...this.queue];
        this.pump();
      });
      return c;
    });
  }

  start(): this {
    for (const c of this.conns) c.start();
    return this;
  }

  /** Puts a background job on `queue`; never throws for server trouble (see stats().dropped). */
  submit(queue: string, data: string, options: { priority?: Priority | undefined; unique?: string | undefined } = {}): void {
    const p: Pending = {
      queue, data, unique: options.unique ?? randomUUID(), type: SUBMIT[options.priority ?? 'normal'],
      bytes: data.length + queue.length + 40,
    };
    this.queue.push(p);
    this.queuedBytes += p.bytes;
    // Jobs already written cannot be taken back: the oldest queued ones go.
    // A lone job larger than maxQueuedBytes is still kept.
    while (this.queue.length > 0 && (this.queue.length + this.inflightCount > this.maxQueued ||
      (this.queuedBytes + this.inflightBytes > this.maxBytes && this.queue.length + this.inflightCount > 1))) {
      const old = this.queue.shift()!;
      this.queuedBytes -= old.bytes;
      this.dropped++;
      this.log?.('error', `no gearmand took jobs: dropped one for queue ${old.queue} (${this.dropped} dropped so far)`);
    }
    this.pump();
  }

  /** Resolves when every job submitted so far has been acknowledged, or after `timeoutMs` (false). */
  flush(timeoutMs = 10_000): Promise<boolean> {
    if (this.idle()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve(false);
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.waiters.push(done);
    });
  }

  stats(): ClientStats {
    return {
      submitted: this.submitted, queued: this.queue.length, inFlight: this.inflightCount,
      bytes: this.queuedBytes + this.inflightBytes, dropped: this.dropped,
      reconnects: this.conns.reduce((n, c) => n + c.reconnects, 0),
    };
  }

  close(): void {
    for (const c of this.conns) c.close();
  }

  private idle(): boolean {
    return this.queue.length === 0 && this.inflightCount === 0;
  }

  private pump(): void {
    // Server order is preference order, as in the C worker.
    const conn = this.conns.find((c) => c.connected);
    if (conn === undefined) return;
    const list = this.inflight.get(conn)!;
    // A window of unanswered jobs, and write() backpressure: 'drain' and
    // each JOB_CREATED call pump() again.
    while (this.queue.length > 0 && list.length < this.window && conn.writable) {
      const p = this.queue[0];
      if (!conn.send(p.type, [p.queue, p.unique, p.data], true)) break;
      this.queue.shift();
      this.queuedBytes -= p.bytes;
      this.inflightBytes += p.bytes;
      this.inflightCount++;
      list.push(p);
    }
  }

  private onPacket(c: GearmanConnection, p: Packet): void {
    if (p.type !== PacketType.JOB_CREATED && p.type !== PacketType.ERROR) return;
    c.answered();
    const list = this.inflight.get(c)!;
    const job = list.shift();
    if (job === undefined) return;
    this.inflightCount--;
    this.inflightBytes -= job.bytes;
    if (p.type === PacketType.ERROR) {
      this.dropped++;
      const note = this.refusals.pass();
      if (note !== null) this.log?.('error', `gearmand ${c.label} refused a job for ${job.queue}: ${p.args.map((a) => peerText(a)).join(' ')}${note}`);
    } else {
      this.submitted++;
    }
    this.pump();
    if (this.idle()) {
      const w = this.waiters;
      this.waiters = [];
      for (const f of w) f();
    }
  }
}
