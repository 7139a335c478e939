// GearmanWorker: a drop-in for the C mod_gearman_worker. Takes check jobs from
// one or more gearmand, runs at most maxWorker at once through noshell, and
// submits the results the C worker would send to each job's result queue.
import { EventEmitter, setMaxListeners } from 'node:events';
import { hostname, loadavg } from 'node:os';
import { GearmanClient } from './client';
import { GearmanConnection, type ServerAddress } from './connection';
import { createPayloadCodec, GearmanPayloadError, type PayloadCodec } from './crypto';
import { executeJob, type ExecuteContext } from './execute-job';
import { parseJob, type CheckJob } from './job-payload';
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

/** What reconfigure() changed, by option name. */
export interface WorkerReconfigured {
  changed: string[];
  serversAdded: string[];
  serversRemoved: string[];
}

function serverKey(a: ServerAddress): string {
  return `${a.host}:${a.port}`;
}

export class GearmanWorker extends EventEmitter {
  private resolved: ResolvedWorkerOptions;
  private given: GearmanWorkerOptions;
  private codec: PayloadCodec;
  private servers: Server[] = [];
  private client: GearmanClient;
  /** Result clients of earlier configurations, flushing what they still hold. */
  private readonly retired = new Set<GearmanClient>();
  private retiredTotals = { submitted: 0, dropped: 0, reconnects: 0 };
  private readonly metricsData = new WorkerMetrics();
  /** Jobs running, by a number of their own (handles repeat across servers and gearmand restarts). */
  private readonly running = new Set<number>();
  private jobSeq = 0;
  /** Aborted at stop() past the deadline: kills every running job (one signal shared, not a controller per job). */
  private readonly killAll = new AbortController();
  private readonly log: NonNullable<GearmanWorkerOptions['log']>;
  private statusQueue: string;
  private loadTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private idleWaiters: Array<() => void> = [];
  private started = false;
  private readonly ctx: ExecuteContext;
  /** Where grab() starts, turned each call so no server is always served first. */
  private nextServer = 0;

  constructor(options: GearmanWorkerOptions) {
    super();
    this.resolved = resolveWorkerOptions(options);
    this.given = options;
    this.codec = createPayloadCodec(options);
    this.log = options.log ?? (() => {});
    this.statusQueue = `worker_${this.resolved.identifier}`;
    // One listener per running job: max-worker of them is expected, not a leak.
    setMaxListeners(0, this.killAll.signal);
    this.client = this.newClient(options);
    this.ctx = { options: this.resolved, client: this.client, codec: this.codec, metrics: this.metricsData, log: this.log };
    this.servers = this.resolved.servers.map((a) => this.newServer(a));
  }

  /** The options in force (after the last reconfigure()). */
  get options(): ResolvedWorkerOptions {
    return this.resolved;
  }

  start(): this {
    if (this.started) return this;
    this.started = true;
    this.client.start();
    for (const s of this.servers) s.conn.start();
    this.log('info', `worker ${this.resolved.identifier} serving ${this.resolved.queues.join(', ')} with up to ${this.resolved.maxWorker} jobs at once`);
    return this;
  }

  /**
   * Applies new options to the running worker, as the C worker does on
   * SIGHUP: servers added or dropped, queues, identifier, max-worker, job
   * timeouts, load limits and the key take effect for the next job; jobs
   * running now finish under the settings they started with and their
   * results are still sent. Throws (and changes nothing) if the options are
   * invalid. `log` stays the one given at construction.
   */
  reconfigure(options: GearmanWorkerOptions): WorkerReconfigured {
    if (this.stopping) throw new Error('GearmanWorker: stopping, cannot reconfigure');
    const next = resolveWorkerOptions(options);
    const codec = createPayloadCodec(options);
    const prev = this.resolved;
    const changed: string[] = (Object.keys(next) as Array<keyof ResolvedWorkerOptions>)
      .filter((k) => JSON.stringify(next[k]) !== JSON.stringify(prev[k]));
    if (codec.encrypted !== this.codec.encrypted || options.key !== this.given.key || options.keyfile !== this.given.keyfile) changed.push('encryption');
    const oldKeys = new Set(prev.servers.map(serverKey));
    const newKeys = new Set(next.servers.map(serverKey));
    const serversAdded = next.servers.filter((a) => !oldKeys.has(serverKey(a))).map(serverKey);
    const serversRemoved = prev.servers.filter((a) => !newKeys.has(serverKey(a))).map(serverKey);
    this.resolved = next;
    this.given = options;
    this.codec = codec;
    this.ctx.options = next;
    this.ctx.codec = codec;
    const abilitiesChanged = changed.includes('queues') || changed.includes('identifier');
    this.statusQueue = `worker_${next.identifier}`;
    if (serversAdded.length > 0 || serversRemoved.length > 0) {
      // Results go to the new servers from now on; what the old client still
      // holds is flushed to the old ones before it closes.
      const old = this.client;
      this.client = this.newClient(options);
      this.ctx.client = this.client;
      if (this.started) this.client.start();
      this.retire(old);
      const keep: Server[] = [];
      for (const s of this.servers) {
        if (newKeys.has(serverKey(s.conn.server))) keep.push(s);
        else {
          // gearmand gives the jobs this connection holds to another worker.
          s.conn.send(PacketType.RESET_ABILITIES);
          s.conn.close();
        }
      }
      for (const a of next.servers) {
        if (oldKeys.has(serverKey(a))) continue;
        const s = this.newServer(a);
        keep.push(s);
        if (this.started) s.conn.start();
      }
      this.servers = keep;
      this.nextServer = 0;
    }
    for (const s of this.servers) {
      s.grabs.setLimit(next.maxWorker);
      if (abilitiesChanged && s.conn.connected) this.announce(s, true);
    }
    this.log('info', `reconfigured: ${changed.length > 0 ? changed.join(', ') : 'nothing'} changed` +
      `${serversAdded.length > 0 ? `; servers added ${serversAdded.join(', ')}` : ''}` +
      `${serversRemoved.length > 0 ? `; servers removed ${serversRemoved.join(', ')}` : ''}; ${this.running.size} jobs running go on`);
    this.grab();
    return { changed, serversAdded, serversRemoved };
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
    const flushMs = options.flushMs ?? 5_000;
    await Promise.all([this.client, ...this.retired].map((c) => c.flush(flushMs)));
    for (const s of this.servers) s.conn.close();
    this.client.close();
    for (const c of this.retired) c.close();
  }

  get runningJobs(): number {
    return this.running.size;
  }

  stats() {
    const totals = { ...this.retiredTotals };
    let queued = 0;
    for (const client of [this.client, ...this.retired]) {
      const c = client.stats();
      totals.submitted += c.submitted;
      totals.dropped += c.dropped;
      totals.reconnects += c.reconnects;
      queued += c.queued + c.inFlight;
    }
    return {
      running: this.running.size, jobsDone: this.metricsData.jobsDone(), timeouts: this.metricsData.timeouts,
      connected: this.servers.filter((s) => s.conn.connected).length,
      reconnects: this.servers.reduce((n, s) => n + s.conn.reconnects, 0) + totals.reconnects,
      resultsSubmitted: totals.submitted, resultsQueued: queued, resultsDropped: totals.dropped,
    };
  }

  /** Prometheus text format. */
  metrics(): string {
    const s = this.stats();
    this.metricsData.running = s.running;
    return this.metricsData.format({ maxWorker: this.resolved.maxWorker, ...s });
  }

  private newClient(o: GearmanWorkerOptions): GearmanClient {
    return new GearmanClient(this.resolved.servers, {
      backoffMinMs: o.backoffMinMs, backoffMaxMs: o.backoffMaxMs, answerTimeoutMs: o.answerTimeoutMs, log: this.log,
      maxQueued: o.maxQueuedResults,
    });
  }

  private retire(client: GearmanClient): void {
    this.retired.add(client);
    void client.flush(30_000).then((all) => {
      if (!all) this.log('error', 'results for servers no longer configured could not all be sent within 30 s');
      const c = client.stats();
      this.retiredTotals.submitted += c.submitted;
      this.retiredTotals.dropped += c.dropped + c.queued + c.inFlight;
      this.retiredTotals.reconnects += c.reconnects;
      this.retired.delete(client);
      client.close();
    });
  }

  private newServer(address: ServerAddress): Server {
    const o = this.given;
    const conn = new GearmanConnection(address, {
      backoffMinMs: o.backoffMinMs, backoffMaxMs: o.backoffMaxMs, answerTimeoutMs: o.answerTimeoutMs, log: this.log,
    });
    const server: Server = { conn, grabs: new GrabWindow(this.resolved.maxWorker) };
    conn.on('connect', () => {
      this.announce(server, false);
      server.grabs.connected();
      this.grab();
    });
    conn.on('disconnect', () => server.grabs.disconnected());
    conn.on('packet', (p) => this.onPacket(server, p));
    conn.on('drain', () => this.grab());
    return server;
  }

  /**
   * Tells gearmand which queues this connection serves. Again after a
   * change: gearmand reads packets in order, so grabs already sent are
   * answered under the old abilities and the window stays as it is.
   */
  private announce(s: Server, again: boolean): void {
    if (again) s.conn.send(PacketType.RESET_ABILITIES);
    for (const q of [...this.resolved.queues, this.statusQueue]) s.conn.send(PacketType.CAN_DO, [q]);
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
    const limits = this.resolved.loadLimits;
    if (limits[0] <= 0 && limits[1] <= 0 && limits[2] <= 0) return false;
    const load = loadavg();
    return limits.some((l, i) => l > 0 && load[i] > l);
  }

  /** Asks servers for jobs while slots are free (a grab in flight holds a slot). */
  private grab(): void {
    if (this.stopping) return;
    const n = this.servers.length;
    let free = this.resolved.maxWorker - this.running.size;
    for (const s of this.servers) free -= s.grabs.outstanding;
    if (free <= 0) return;
    const start = this.nextServer;
    this.nextServer = (start + 1) % n;
    for (let i = 0; i < n && free > 0; i++) {
      const s = this.servers[(start + i) % n];
      // A gearmand that stops reading gets no more grabs until its socket
      // drains: each grab can bring a job whose answer we would have to
      // buffer (a status-queue flood grew the worker by 800 MB, issue 17).
      if (!s.conn.writable) continue;
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
          if (!s.conn.writable) {
            // Assigning unasked and not reading our answers: every WORK_FAIL would
            // only pile up in our write buffer.
            s.conn.drop(`assigns jobs without grabs and does not read (${s.conn.bufferedBytes} bytes unread)`);
            break;
          }
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
      finish(PacketType.WORK_COMPLETE, [statusAnswer(hostname(), this.resolved, this.running.size, this.metricsData.jobsDone() + this.metricsData.statusRequests)]);
      return;
    }
    let job: CheckJob;
    try {
      job = parseJob(this.codec.decode(data));
    } catch (err) {
      // Whatever this payload does to the decoder, it costs this job only:
      // an exception here would run up the socket's data handler and take
      // the worker down, and gearmand would hand the job to the next worker.
      const why = err instanceof GearmanPayloadError ? err.message : `cannot handle the payload (${data.length} bytes): ${String(err)}`;
      this.log('error', `job ${handle} on ${queue}: ${why}; WORK_FAIL`);
      this.metricsData.countJob(queue, 'failed');
      finish(PacketType.WORK_FAIL, []);
      return;
    }
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
