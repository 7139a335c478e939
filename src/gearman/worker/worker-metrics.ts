// Counters of a GearmanWorker: jobs by queue and result, timeouts, CPU, the
// job latency histogram. Their text (the series /metrics serves) is written
// by metrics/text/gearman-worker-text.ts.
import { LATENCY_BUCKETS, type WorkerFigures } from '../../metrics/text/gearman-worker-text';

export type JobResultLabel = 'ok' | 'warning' | 'critical' | 'unknown' | 'timeout' | 'no_result' | 'discarded' | 'failed';

export class WorkerMetrics implements WorkerFigures {
  readonly jobs = new Map<string, number>(); // `${queue}\0${result}`
  timeouts = 0;
  running = 0;
  checkCpuSeconds = 0;
  statusRequests = 0;
  viaShell = 0;
  readonly buckets: number[] = new Array<number>(LATENCY_BUCKETS.length).fill(0);
  latencySum = 0;
  latencyCount = 0;

  countJob(queue: string, result: JobResultLabel): void {
    const k = `${queue}\0${result}`;
    this.jobs.set(k, (this.jobs.get(k) ?? 0) + 1);
  }

  jobsDone(): number {
    let n = 0;
    for (const v of this.jobs.values()) n += v;
    return n;
  }

  /** Grab (JOB_ASSIGN received) to result handed to the client, in seconds. */
  observeLatency(seconds: number): void {
    this.latencySum += seconds;
    this.latencyCount++;
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) if (seconds <= LATENCY_BUCKETS[i]) this.buckets[i]++;
  }
}
