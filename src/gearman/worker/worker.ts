// GearmanWorker: a drop-in for the C mod_gearman_worker. Takes check jobs from
// one or more gearmand, runs at most maxWorker at once through noshell, and
// submits the results the C worker would send to each job's result queue.
import { countOf } from '../../util/count-text';
import { EventEmitter, setMaxListeners } from 'node:events';
import { hostname, loadavg } from 'node:os';
import type { ConnectionOptions, GearmanConnection } from '../protocol/connection';
import { createPayloadCodec, GearmanPayloadError } from '../payload/crypto';
import { definedFields } from '../../util/defined-fields';
import { executeJob, type ExecuteContext } from './execute-job';
import { parseJob, type CheckJob } from '../payload/job-payload';
import { LogLimit, peerText } from '../protocol/log-limit';
import { PacketType } from '../protocol/packet';
import { ResultClients } from './result-clients';
import { statusAnswer } from './status-answer';
import { configChanges, type WorkerReconfigured } from './worker-changes';
import { WorkerMetrics } from './worker-metrics';
import { resolveWorkerOptions, type GearmanWorkerOptions, type ResolvedWorkerOptions } from './worker-options';
import { JobPlans } from './run-job';
import { WorkerServers } from './worker-servers';
import { formatWorkerMetrics } from '../../metrics/text/gearman-worker-text';

export type { WorkerJobEvent } from './execute-job';
export type { WorkerReconfigured } from './worker-changes';

function connectionOptions(o: GearmanWorkerOptions, log: ConnectionOptions['log']): ConnectionOptions {
  return definedFields({ backoffMinMs: o.backoffMinMs, backoffMaxMs: o.backoffMaxMs, answerTimeoutMs: o.answerTimeoutMs, log });
}

export class GearmanWorker extends EventEmitter {
  private resolved: ResolvedWorkerOptions;
  private given: GearmanWorkerOptions;
  private readonly servers: WorkerServers;
  private readonly results: ResultClients;
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
  /** Lines about jobs that cannot be run (anyone who can submit jobs can cause them). */
  private readonly badJobs = new LogLimit();

  constructor(options: GearmanWorkerOptions) {
    super();
    this.resolved = resolveWorkerOptions(options);
    this.given = options;
    const codec = createPayloadCodec(options);
    this.log = options.log ?? (() => {});
    this.statusQueue = `worker_${this.resolved.identifier}`;
    // One listener per running job: max-worker of them is expected, not a leak.
    setMaxListeners(0, this.killAll.signal);
    const conn = connectionOptions(options, this.log);
    this.results = new ResultClients(this.resolved.servers, definedFields({ ...conn, maxQueued: options.maxQueuedResults }), this.log);
    this.ctx = { options: this.resolved, client: this.results, codec, metrics: this.metricsData, log: this.log, plans: new JobPlans() };
    this.servers = new WorkerServers(this.resolved.servers, conn, this.resolved.maxWorker, {
      log: this.log,
      abilities: () => [...this.resolved.queues, this.statusQueue],
      freeSlots: () => this.resolved.maxWorker - this.running.size,
      mayGrab: () => this.mayGrab(),
      onJob: (c, handle, queue, data) => this.onJob(c, handle, queue, data),
    });
  }

  /** The options in force (after the last reconfigure()). */
  get options(): ResolvedWorkerOptions {
    return this.resolved;
  }

  start(): this {
    if (this.started) return this;
    this.started = true;
    this.results.start();
    this.servers.start();
    this.log('info', `worker ${this.resolved.identifier} serving ${this.resolved.queues.join(', ')} with up to ${countOf(this.resolved.maxWorker, 'job')} at once`);
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
    const diff = configChanges(this.resolved, next, this.given, options);
    this.resolved = next;
    this.given = options;
    this.ctx.options = next;
    this.ctx.codec = codec;
    this.statusQueue = `worker_${next.identifier}`;
    if (diff.serversAdded.length > 0 || diff.serversRemoved.length > 0) {
      const conn = connectionOptions(options, this.log);
      this.results.replace(next.servers, definedFields({ ...conn, maxQueued: options.maxQueuedResults }));
      this.servers.setAddresses(next.servers, conn);
    }
    this.servers.setLimit(next.maxWorker);
    if (diff.changed.includes('queues') || diff.changed.includes('identifier')) this.servers.reannounce();
    this.log('info', `reconfigured: ${diff.changed.length > 0 ? diff.changed.join(', ') : 'nothing'} changed` +
      `${diff.serversAdded.length > 0 ? `; servers added ${diff.serversAdded.join(', ')}` : ''}` +
      `${diff.serversRemoved.length > 0 ? `; servers removed ${diff.serversRemoved.join(', ')}` : ''}; ${countOf(this.running.size, 'job')} running, left to finish`);
    this.servers.grab();
    return diff;
  }

  /** Stops taking jobs, lets running ones finish until `deadlineMs`, kills the rest, submits every result, disconnects. */
  async stop(options: { deadlineMs?: number | undefined; flushMs?: number | undefined } = {}): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.loadTimer !== null) clearTimeout(this.loadTimer);
    // Grabs still in flight come back NO_JOB, a job already assigned is still run.
    this.servers.resetAbilities();
    const deadline = options.deadlineMs ?? 10_000;
    if (!(await this.waitIdle(deadline))) {
      this.log('error', `stopping: killing ${countOf(this.running.size, 'job')} still running after ${deadline} ms`);
      this.killAll.abort();
      await this.waitIdle(10_000);
    }
    await this.results.flush(options.flushMs ?? 5_000);
    this.servers.close();
    this.results.close();
  }

  get runningJobs(): number {
    return this.running.size;
  }

  stats() {
    const c = this.results.stats();
    return {
      running: this.running.size, jobsDone: this.metricsData.jobsDone(), timeouts: this.metricsData.timeouts,
      connected: this.servers.connected, reconnects: this.servers.reconnects + c.reconnects,
      resultsSubmitted: c.submitted, resultsQueued: c.queued, resultsDropped: c.dropped,
    };
  }

  /** Prometheus text format. */
  metrics(): string {
    const s = this.stats();
    this.metricsData.running = s.running;
    return formatWorkerMetrics(this.metricsData, { maxWorker: this.resolved.maxWorker, ...s });
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

  /** No grabs while stopping; over a load limit, none until a second later. */
  private mayGrab(): boolean {
    if (this.stopping) return false;
    const limits = this.resolved.loadLimits;
    if (limits[0] <= 0 && limits[1] <= 0 && limits[2] <= 0) return true;
    const load = loadavg();
    if (!limits.some((l, i) => l > 0 && load[i] > l)) return true;
    this.loadTimer ??= setTimeout(() => {
      this.loadTimer = null;
      this.servers.grab();
    }, 1000);
    return false;
  }

  /**
   * The queue as a metrics label: gearmand names it, and a series per name a
   * hostile one makes up would grow without bound.
   */
  private queueLabel(queue: string): string {
    return this.resolved.queues.includes(queue) ? queue : 'other';
  }

  private onJob(conn: GearmanConnection, handle: string, queue: string, data: Buffer): void {
    const gen = conn.generation;
    const finish = (type: number, args: string[]) => {
      // A job from a lost connection is gearmand's again; answering on the new one would be wrong.
      if (conn.generation === gen) conn.send(type, [handle, ...args]);
      // A dropped server's connection closes once its last job is answered (worker-servers.ts).
      this.servers.jobAnswered(conn, gen);
    };
    if (queue === this.statusQueue) {
      this.metricsData.statusRequests++;
      finish(PacketType.WORK_COMPLETE, [statusAnswer(hostname(), this.resolved, this.running.size, this.metricsData.jobsDone() + this.metricsData.statusRequests)]);
      return;
    }
    let job: CheckJob;
    try {
      job = parseJob(this.ctx.codec.decode(data));
    } catch (err) {
      // Whatever this payload does to the decoder, it costs this job only:
      // an exception here would run up the socket's data handler and take
      // the worker down, and gearmand would hand the job to the next worker.
      const why = err instanceof GearmanPayloadError ? err.message : `cannot handle the payload (${data.length} bytes): ${String(err)}`;
      const note = this.badJobs.pass();
      if (note !== null) this.log('error', `job ${peerText(handle)} on ${peerText(queue)}: ${why}; WORK_FAIL${note}`);
      this.metricsData.countJob(this.queueLabel(queue), 'failed');
      finish(PacketType.WORK_FAIL, []);
      return;
    }
    if (job.knownKeys === 0 || job.type === undefined || job.commandLine === undefined) {
      const why = job.knownKeys === 0 ? 'check your encryption settings' : job.type === undefined ? 'no type given' : 'no command line given';
      const note = this.badJobs.pass();
      if (note !== null) this.log('error', `discarded invalid job ${peerText(handle)} on ${peerText(queue)}: ${why}${note}`);
      this.metricsData.countJob(this.queueLabel(queue), 'discarded');
      finish(PacketType.WORK_COMPLETE, ['']);
      return;
    }
    const key = ++this.jobSeq;
    this.running.add(key);
    executeJob(this.ctx, this.queueLabel(queue), handle, job, this.killAll.signal, performance.now())
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
        this.servers.grab();
      });
  }
}
