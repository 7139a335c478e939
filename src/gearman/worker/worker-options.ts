// Options of GearmanWorker, named after the C worker's (worker.conf) keys.
import { hostname } from 'node:os';
import { describe } from '../../util/validate';
import { parseServer, type ServerAddress } from '../protocol/connection';

export interface GearmanWorkerOptions {
  /** `host[:port]` strings or addresses; several servers are served at once. */
  servers: ReadonlyArray<string | ServerAddress>;
  /** Default true. */
  encryption?: boolean | undefined;
  key?: string | undefined;
  keyfile?: string | undefined;
  /** Default: the host name. Used in texts, `source=` and the `worker_<identifier>` status queue. */
  identifier?: string | undefined;
  hosts?: boolean | undefined;
  services?: boolean | undefined;
  eventhandlers?: boolean | undefined;
  notifications?: boolean | undefined;
  hostgroups?: readonly string[] | undefined;
  servicegroups?: readonly string[] | undefined;
  /** Jobs run at once (default 20). */
  maxWorker?: number | undefined;
  /** Reported in the status answer only (default 1). */
  minWorker?: number | undefined;
  /** Seconds for jobs without a timeout (default 60). */
  jobTimeout?: number | undefined;
  /** return_code of timed-out checks (default 2). */
  timeoutReturn?: number | undefined;
  /** Append stderr to the output (default true). */
  showErrorOutput?: boolean | undefined;
  /** No new jobs while the 1/5/15-minute load average is above these (0: no limit). */
  loadLimit1?: number | undefined;
  loadLimit5?: number | undefined;
  loadLimit15?: number | undefined;
  /** Results kept while no server is reachable (default 10,000). */
  maxQueuedResults?: number | undefined;
  /** Reconnect backoff, ms (default 100 → 5,000). */
  backoffMinMs?: number | undefined;
  backoffMaxMs?: number | undefined;
  /** A gearmand that leaves a grab or a result unanswered this long is dropped and redialled (default 30 s; 0: never). */
  answerTimeoutMs?: number | undefined;
  log?: ((level: 'error' | 'info' | 'debug', message: string) => void) | undefined;
}

export interface ResolvedWorkerOptions {
  servers: ServerAddress[];
  identifier: string;
  queues: string[];
  maxWorker: number;
  minWorker: number;
  jobTimeout: number;
  timeoutReturn: number;
  showErrorOutput: boolean;
  loadLimits: [number, number, number];
}

function count(v: unknown, name: string, dflt: number, min = 0): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min) {
    throw new TypeError(`GearmanWorker: ${name} must be a number ≥ ${min}, got ${describe(v)}`);
  }
  return v;
}

/** The queues the C worker serves for these options; none given → host, service, eventhandler, notification. */
export function workerQueues(o: Pick<GearmanWorkerOptions, 'hosts' | 'services' | 'eventhandlers' | 'notifications' | 'hostgroups' | 'servicegroups'>): string[] {
  const groups = [...(o.hostgroups ?? []).map((g) => `hostgroup_${g}`), ...(o.servicegroups ?? []).map((g) => `servicegroup_${g}`)];
  const byHand = o.hosts !== undefined || o.services !== undefined || o.eventhandlers !== undefined || o.notifications !== undefined || groups.length > 0;
  if (!byHand) return ['host', 'service', 'eventhandler', 'notification'];
  const q: string[] = [];
  if (o.hosts) q.push('host');
  if (o.services) q.push('service');
  if (o.eventhandlers) q.push('eventhandler');
  if (o.notifications) q.push('notification');
  return [...q, ...groups];
}

export function resolveWorkerOptions(o: GearmanWorkerOptions): ResolvedWorkerOptions {
  if (typeof o !== 'object' || o === null) throw new TypeError('GearmanWorker: options must be an object');
  if (!Array.isArray(o.servers) || o.servers.length === 0) throw new TypeError('GearmanWorker: at least one server is needed');
  const servers = o.servers.map((s: string | ServerAddress) => (typeof s === 'string' ? parseServer(s) : s));
  const identifier = o.identifier ?? hostname();
  if (typeof identifier !== 'string' || identifier === '' || /[\0\n]/.test(identifier)) {
    throw new TypeError('GearmanWorker: identifier must be a non-empty single-line string');
  }
  const queues = workerQueues(o);
  if (queues.length === 0) throw new TypeError('GearmanWorker: no queue to serve');
  return {
    servers, identifier, queues,
    maxWorker: Math.floor(count(o.maxWorker, 'maxWorker', 20, 1)),
    minWorker: Math.floor(count(o.minWorker, 'minWorker', 1)),
    jobTimeout: count(o.jobTimeout, 'jobTimeout', 60, 1),
    timeoutReturn: Math.floor(count(o.timeoutReturn, 'timeoutReturn', 2)),
    showErrorOutput: o.showErrorOutput ?? true,
    loadLimits: [count(o.loadLimit1, 'loadLimit1', 0), count(o.loadLimit5, 'loadLimit5', 0), count(o.loadLimit15, 'loadLimit15', 0)],
  };
}
