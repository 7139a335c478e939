// Gearman client for background jobs: results and check jobs go to the first
// connected server; while none is, they wait in a bounded queue and are sent
// once one is back. A job counts as sent when the server answers JOB_CREATED.
import { randomUUID } from 'node:crypto';
import { GearmanConnection, type ConnectionOptions, type ServerAddress } from './connection';
import { PacketType, type Packet } from './packet';

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
  maxQueued?: number;
  /** Bytes kept likewise (default 64 MiB). */
  maxQueuedBytes?: number;
}

export interface ClientStats {
  submitted: number;
  queued: number;
  inFlight: number;
  dropped: number;
  reconnects: number;
}

export class GearmanClient {
  private readonly conns: GearmanConnection[];
  private readonly inflight = new Map<GearmanConnection, Pending[]>();
  private queue: Pending[] = [];
  private queuedBytes = 0;
  private readonly maxQueued: number;
  private readonly maxBytes: number;
  private waiters: Array<() => void> = [];
  private readonly log: ClientOptions['log'];
  submitted = 0;
  dropped = 0;

  constructor(servers: readonly ServerAddress[], options: ClientOptions = {}) {
    if (servers.length === 0) throw new TypeError('GearmanClient: at least one server is needed');
    this.maxQueued = options.maxQueued ?? 10_000;
    this.maxBytes = options.maxQueuedBytes ?? 64 * 1024 * 1024;
    this.log = options.log;
    this.conns = servers.map((s) => {
      const c = new GearmanConnection(s, options);
      this.inflight.set(c, []);
      c.on('connect', () => this.pump());
      c.on('packet', (p) => this.onPacket(c, p));
      c.on('disconnect', () => {
        // Unacknowledged jobs go back to the front; gearmand coalesces a
        // resubmission by its unique id if the first one did arrive.
        const lost = this.inflight.get(c)!;
        this.inflight.set(c, []);
        for (const p of lost) this.queuedBytes += p.bytes;
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
  submit(queue: string, data: string, options: { priority?: Priority; unique?: string } = {}): void {
    const p: Pending = {
      queue, data, unique: options.unique ?? randomUUID(), type: SUBMIT[options.priority ?? 'normal'],
      bytes: data.length + queue.length + 40,
    };
    this.queue.push(p);
    this.queuedBytes += p.bytes;
    while (this.queue.length > this.maxQueued || (this.queuedBytes > this.maxBytes && this.queue.length > 1)) {
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
    let inFlight = 0;
    for (const l of this.inflight.values()) inFlight += l.length;
    return {
      submitted: this.submitted, queued: this.queue.length, inFlight, dropped: this.dropped,
      reconnects: this.conns.reduce((n, c) => n + c.reconnects, 0),
    };
  }

  close(): void {
    for (const c of this.conns) c.close();
  }

  private idle(): boolean {
    if (this.queue.length > 0) return false;
    for (const l of this.inflight.values()) if (l.length > 0) return false;
    return true;
  }

  private pump(): void {
    // Server order is preference order, as in the C worker.
    const conn = this.conns.find((c) => c.connected);
    if (conn === undefined) return;
    const list = this.inflight.get(conn)!;
    while (this.queue.length > 0) {
      const p = this.queue[0];
      if (!conn.send(p.type, [p.queue, p.unique, p.data])) break;
      this.queue.shift();
      this.queuedBytes -= p.bytes;
      list.push(p);
    }
  }

  private onPacket(c: GearmanConnection, p: Packet): void {
    if (p.type !== PacketType.JOB_CREATED && p.type !== PacketType.ERROR) return;
    const list = this.inflight.get(c)!;
    const job = list.shift();
    if (job === undefined) return;
    if (p.type === PacketType.ERROR) {
      this.dropped++;
      this.log?.('error', `gearmand ${c.label} refused a job for ${job.queue}: ${p.args.map((a) => a.toString()).join(' ')}`);
    } else {
      this.submitted++;
    }
    if (this.idle()) {
      const w = this.waiters;
      this.waiters = [];
      for (const f of w) f();
    }
  }
}
