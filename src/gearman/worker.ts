// GearmanWorker: a drop-in for the C mod_gearman_worker. Takes check jobs from
// one or more gearmand, runs at most maxWorker at once through noshell, and
// submits the results the C worker would send to each job's result queue.
import { EventEmitter, setMaxListeners } from 'node:events';
import { hostname, loadavg } from 'node:os';
import { GearmanClient } from './client';
import { GearmanConnection } from './connection';
import { definedFields } from '../defined-fields';
import { createPayloadCodec, GearmanPayloadError, type PayloadCodec } from './crypto';
import { executeJob, type ExecuteContext } from './execute-job';
import { parseJob } from './job-payload';
import { GrabWindow } from './grab-window';
import { PacketType, type Packet } from './packet';
import { WorkerMetrics } from './worker-metrics';
import { resolveWorkerOptions, type GearmanWorkerOptions, type ResolvedWorkerOptions } from './worker-options';
import { statusAnswer } from './status-answer';

interface Server {
  conn: GearmanConnection;
  grabs: GrabWindow;
}

export type { WorkerJobEvent } from './execute-job';

export class GearmanWorker extends EventEmitter {
  readonly options: ResolvedWorkerOptions;
  private readonly codec: PayloadCodec;
  private readonly servers: Server[];
  private readonly client: GearmanClient;
  private readonly metricsData = new WorkerMetrics();
  /** Jobs running, by a number of their own (handles repeat across servers and gearmand restarts). */
  private readonly running = new Set<number>();
  private jobSeq = 0;
  /** Aborted at stop() past the deadline: kills every running job (one signal shared, not a controller per job). */
  private readonly killAll = new AbortController();
  private readonly log: NonNullable<GearmanWorkerOptions['log']>;
  private readonly statusQueue: string;
  private loadTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private idleWaiters: Array<() => void> = [];
  private started = false;
  private readonly ctx: ExecuteContext;
  /** Where grab() starts, turned each call so no server is always served first. */
  private nextServer = 0;

  constructor(options: GearmanWorkerOptions) {
    super();
    this.options = resolveWorkerOptions(options);
    this.codec = createPayloadCodec(options);
    this.log = options.log ?? (() => {});
    this.statusQueue = `worker_${this.options.identifier}`;
    // One listener per running job: max-worker of them is expected, not a leak.
    setMaxListeners(0, this.killAll.signal);
    const connOpts = definedFields({
      backoffMinMs: options.backoffMinMs, backoffMaxMs: options.backoffMaxMs, answerTimeoutMs: options.answerTimeoutMs, log: this.log,
    });
    this.client = new GearmanClient(this.options.servers, { ...connOpts, maxQueued: options.maxQueuedResults });
    this.ctx = { options: this.options, client: this.client, codec: this.codec, metrics: this.metricsData, log: this.log };
    this.servers = this.options.servers.map((address) => {
      const server: Server = { conn: new GearmanConnection(address, connOpts), grabs: new GrabWindow(this.options.maxWorker) };
      server.conn.on('connect', () => {
        for (const q of [...this.options.queues, this.statusQueue]) server.conn.send(PacketType.CAN_DO, [q]);
        server.grabs.connected();
        this.grab();
      });
      server.conn.on('disconnect', () => {
        server.grabs.disconnected();
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
  async stop(options: { deadlineMs?: number | undefined; flushMs?: number | undefined } = {}): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.loadTimer !== null) clearTimeout(this.loadTimer);
    // Withdraw the abilities: grabs still in flight come back NO_JOB, a job
    // already assigned is still run.
    for (const s of this.servers) s.conn.send(PacketType.RESET_ABILITIES);
    const deadline = options.deadlineMs ?? 10_000;
    if (!(await this.waitIdle(deadline))) {
      this.log('error', `stopping: killing ${this.running.size} jobs still running after ${deadline} ms`);
      this.killAll.abort();
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

  /** Asks servers for jobs while slots are free (a grab in flight holds a slot). */
  private grab(): void {
    if (this.stopping) return;
    const n = this.servers.length;
    let free = this.options.maxWorker - this.running.size;
    for (const s of this.servers) free -= s.grabs.outstanding;
    if (free <= 0) return;
    const start = this.nextServer;
    this.nextServer = (start + 1) % n;
    for (let i = 0; i < n && free > 0; i++) {
      const s = this.servers[(start + i) % n];
      let want = s.grabs.wanted(free);
      if (want === 0) continue;
      if (this.loadExceeded()) {
        this.loadTimer ??= setTimeout(() => {
          this.loadTimer = null;
          this.grab();
        }, 1000);
        return;
      }
      // Packets of one tick leave in one write (see GearmanConnection.send).
      let sent = 0;
      while (want-- > 0 && s.conn.send(PacketType.GRAB_JOB_UNIQ, [], true)) sent++;
      s.grabs.sent(sent);
      free -= sent;
    }
  }

  private onPacket(s: Server, p: Packet): void {
    switch (p.type) {
      case PacketType.NO_JOB:
        s.conn.answered();
        if (s.grabs.noJob()) s.conn.send(PacketType.PRE_SLEEP);
        else this.grab();
        break;
      case PacketType.NOOP:
        s.grabs.woken();
        this.grab();
        break;
      case PacketType.JOB_ASSIGN_UNIQ:
        if (s.grabs.outstanding === 0) {
          // Not an answer to a grab: running it could go past max-worker.
          this.log('error', `gearmand ${s.conn.label} assigned job ${p.args[0].toString('latin1')} without a grab; WORK_FAIL`);
          s.conn.send(PacketType.WORK_FAIL, [p.args[0]]);
          break;
        }
        s.conn.answered();
        s.grabs.assigned();
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
    const key = ++this.jobSeq;
    this.running.add(key);
    const grabbed = performance.now();
    executeJob(this.ctx, queue, handle, job, this.killAll.signal, grabbed)
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
