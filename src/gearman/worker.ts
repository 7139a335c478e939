// GearmanWorker: a drop-in for the C mod_gearman_worker. Takes check jobs from
// one or more gearmand, runs at most maxWorker at once through noshell, and
// submits the results the C worker would send to each job's result queue.
import { EventEmitter } from 'node:events';
import { hostname, loadavg } from 'node:os';
import { GearmanClient } from './client';
import { GearmanConnection } from './connection';
import { createPayloadCodec, GearmanPayloadError, type PayloadCodec } from './crypto';
import { executeJob, type ExecuteContext } from './execute-job';
import { parseJob } from './job-payload';
import { PacketType, type Packet } from './packet';
import { WorkerMetrics } from './worker-metrics';
import { resolveWorkerOptions, type GearmanWorkerOptions, type ResolvedWorkerOptions } from './worker-options';
import { statusAnswer } from './status-answer';

type GrabState = 'down' | 'idle' | 'grabbing' | 'sleeping';

interface Server {
  conn: GearmanConnection;
  state: GrabState;
}

export type { WorkerJobEvent } from './execute-job';

export class GearmanWorker extends EventEmitter {
  readonly options: ResolvedWorkerOptions;
  private readonly codec: PayloadCodec;
  private readonly servers: Server[];
  private readonly client: GearmanClient;
  private readonly metricsData = new WorkerMetrics();
  private readonly running = new Map<string, AbortController>();
  private readonly log: NonNullable<GearmanWorkerOptions['log']>;
  private readonly statusQueue: string;
  private loadTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private idleWaiters: Array<() => void> = [];
  private started = false;
  private readonly ctx: ExecuteContext;

  constructor(options: GearmanWorkerOptions) {
    super();
    this.options = resolveWorkerOptions(options);
    this.codec = createPayloadCodec(options);
    this.log = options.log ?? (() => {});
    this.statusQueue = `worker_${this.options.identifier}`;
    const connOpts = { backoffMinMs: options.backoffMinMs, backoffMaxMs: options.backoffMaxMs, log: this.log };
    this.client = new GearmanClient(this.options.servers, { ...connOpts, maxQueued: options.maxQueuedResults });
    this.ctx = { options: this.options, client: this.client, codec: this.codec, metrics: this.metricsData, log: this.log };
    this.servers = this.options.servers.map((address) => {
      const server: Server = { conn: new GearmanConnection(address, connOpts), state: 'down' };
      server.conn.on('connect', () => {
        for (const q of [...this.options.queues, this.statusQueue]) server.conn.send(PacketType.CAN_DO, [q]);
        server.state = 'idle';
        this.grab();
      });
      server.conn.on('disconnect', () => {
        server.state = 'down';
      });
      server.conn.on('packet', (p) => this.onPacket(server, p));
      return server;
    });
  }

  start(): this {
    if (this.started) return this;
    this.started = true;
    this.client.start();
    for (const s of this.servers) s.conn.start();
    this.log('info', `worker ${this.options.identifier} serving ${this.options.queues.join(', ')} with up to ${this.options.maxWorker} jobs at once`);
    return this;
  }

  /** Stops taking jobs, lets running ones finish until `deadlineMs`, kills the rest, submits every result, disconnects. */
  async stop(options: { deadlineMs?: number; flushMs?: number } = {}): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.loadTimer !== null) clearTimeout(this.loadTimer);
    // Withdraw the abilities: grabs still in flight come back NO_JOB, a job
    // already assigned is still run.
    for (const s of this.servers) s.conn.send(PacketType.RESET_ABILITIES);
    const deadline = options.deadlineMs ?? 10_000;
    if (!(await this.waitIdle(deadline))) {
      this.log('error', `stopping: killing ${this.running.size} jobs still running after ${deadline} ms`);
      for (const ac of this.running.values()) ac.abort();
      await this.waitIdle(10_000);
    }
    await this.client.flush(options.flushMs ?? 5_000);
    for (const s of this.servers) s.conn.close();
    this.client.close();
  }

  get runningJobs(): number {
    return this.running.size;
  }

  stats() {
    const c = this.client.stats();
    return {
      running: this.running.size, jobsDone: this.metricsData.jobsDone(), timeouts: this.metricsData.timeouts,
      connected: this.servers.filter((s) => s.conn.connected).length,
      reconnects: this.servers.reduce((n, s) => n + s.conn.reconnects, 0) + c.reconnects,
      resultsSubmitted: c.submitted, resultsQueued: c.queued + c.inFlight, resultsDropped: c.dropped,
    };
  }

  /** Prometheus text format. */
  metrics(): string {
    const s = this.stats();
    this.metricsData.running = s.running;
    return this.metricsData.format({ maxWorker: this.options.maxWorker, ...s });
  }

  private waitIdle(ms: number): Promise<boolean> {
    if (this.running.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  private loadExceeded(): boolean {
    const limits = this.options.loadLimits;
    if (limits[0] <= 0 && limits[1] <= 0 && limits[2] <= 0) return false;
    const load = loadavg();
    return limits.some((l, i) => l > 0 && load[i] > l);
  }

  /** Asks idle servers for jobs while a slot is free (a pending grab holds a slot). */
  private grab(): void {
    if (this.stopping) return;
    let busy = this.running.size + this.servers.filter((s) => s.state === 'grabbing').length;
    for (const s of this.servers) {
      if (s.state !== 'idle' || busy >= this.options.maxWorker) continue;
      if (this.loadExceeded()) {
        this.loadTimer ??= setTimeout(() => {
          this.loadTimer = null;
          this.grab();
        }, 1000);
        return;
      }
      if (s.conn.send(PacketType.GRAB_JOB_UNIQ)) {
        s.state = 'grabbing';
        busy++;
      }
    }
  }

  private onPacket(s: Server, p: Packet): void {
    switch (p.type) {
      case PacketType.NO_JOB:
        s.state = 'sleeping';
        s.conn.send(PacketType.PRE_SLEEP);
        break;
      case PacketType.NOOP:
        if (s.state === 'sleeping') s.state = 'idle';
        this.grab();
        break;
      case PacketType.JOB_ASSIGN_UNIQ:
        s.state = 'idle';
        this.onJob(s.conn, p.args[0].toString('latin1'), p.args[1].toString('utf8'), p.args[3]);
        this.grab();
        break;
      case PacketType.ERROR:
        this.log('error', `gearmand ${s.conn.label} error: ${p.args.map((a) => a.toString()).join(': ')}`);
        break;
      default:
        break;
    }
  }

  private onJob(conn: GearmanConnection, handle: string, queue: string, data: Buffer): void {
    const gen = conn.generation;
    const finish = (type: number, args: string[]) => {
      // A job from a lost connection is gearmand's again; answering on the new one would be wrong.
      if (conn.generation === gen) conn.send(type, [handle, ...args]);
    };
    if (queue === this.statusQueue) {
      this.metricsData.statusRequests++;
      finish(PacketType.WORK_COMPLETE, [statusAnswer(hostname(), this.options, this.running.size, this.metricsData.jobsDone() + this.metricsData.statusRequests)]);
      return;
    }
    let text: string;
    try {
      text = this.codec.decode(data);
    } catch (err) {
      if (!(err instanceof GearmanPayloadError)) throw err;
      this.log('error', `job ${handle} on ${queue}: ${err.message}; WORK_FAIL`);
      this.metricsData.countJob(queue, 'failed');
      finish(PacketType.WORK_FAIL, []);
      return;
    }
    const job = parseJob(text);
    if (job.knownKeys === 0 || job.type === undefined || job.commandLine === undefined) {
      const why = job.knownKeys === 0 ? 'check your encryption settings' : job.type === undefined ? 'no type given' : 'no command line given';
      this.log('error', `discarded invalid job ${handle} on ${queue}: ${why}`);
      this.metricsData.countJob(queue, 'discarded');
      finish(PacketType.WORK_COMPLETE, ['']);
      return;
    }
    const ac = new AbortController();
    // Handles are only unique per server (two gearmand can both say H:host:1).
    const key = `${conn.label}\0${handle}`;
    this.running.set(key, ac);
    const grabbed = performance.now();
    executeJob(this.ctx, queue, handle, job, ac.signal, grabbed)
      .then((event) => this.emit('job', event))
      .catch((err: unknown) => this.log('error', `job ${handle}: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => {
        finish(PacketType.WORK_COMPLETE, ['']);
        this.running.delete(key);
        if (this.running.size === 0) {
          const w = this.idleWaiters;
          this.idleWaiters = [];
          for (const f of w) f();
        }
        this.grab();
      });
  }

}
