// Counters of a GearmanWorker and their Prometheus text exposition (0.0.4).
export type JobResultLabel = 'ok' | 'warning' | 'critical' | 'unknown' | 'timeout' | 'no_result' | 'discarded' | 'failed';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class WorkerMetrics {
  readonly jobs = new Map<string, number>(); // `${queue}\0${result}`
  timeouts = 0;
  running = 0;
  checkCpuSeconds = 0;
  statusRequests = 0;
  viaShell = 0;
  private readonly buckets = new Array<number>(LATENCY_BUCKETS.length).fill(0);
  private latencySum = 0;
  private latencyCount = 0;

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

  format(extra: { maxWorker: number; reconnects: number; resultsSubmitted: number; resultsQueued: number; resultsDropped: number; connected: number }): string {
    const out: string[] = [];
    const metric = (name: string, type: string, help: string, samples: Array<[string, number]>) => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, v] of samples) out.push(`${name}${labels} ${v}`);
    };
    const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
    metric('noshell_gearman_jobs_total', 'counter', 'Jobs taken from gearmand, by queue and result.',
      [...this.jobs.entries()].map(([k, v]) => {
        const [queue, result] = k.split('\0');
        return [`{queue="${esc(queue)}",result="${result}"}`, v];
      }));
    metric('noshell_gearman_job_timeouts_total', 'counter', 'Jobs killed by their timeout.', [['', this.timeouts]]);
    metric('noshell_gearman_jobs_running', 'gauge', 'Jobs running now.', [['', this.running]]);
    metric('noshell_gearman_max_worker', 'gauge', 'Jobs allowed at once (max-worker).', [['', extra.maxWorker]]);
    metric('noshell_gearman_jobs_via_shell_total', 'counter', 'Jobs whose command line needed /bin/sh.', [['', this.viaShell]]);
    metric('noshell_gearman_check_cpu_seconds_total', 'counter', 'User+system CPU of the checks (rusage).', [['', Number(this.checkCpuSeconds.toFixed(6))]]);
    out.push('# HELP noshell_gearman_job_latency_seconds Job grabbed to result submitted.',
      '# TYPE noshell_gearman_job_latency_seconds histogram');
    LATENCY_BUCKETS.forEach((b, i) => out.push(`noshell_gearman_job_latency_seconds_bucket{le="${b}"} ${this.buckets[i]}`));
    out.push(`noshell_gearman_job_latency_seconds_bucket{le="+Inf"} ${this.latencyCount}`,
      `noshell_gearman_job_latency_seconds_sum ${Number(this.latencySum.toFixed(6))}`,
      `noshell_gearman_job_latency_seconds_count ${this.latencyCount}`);
    metric('noshell_gearman_status_requests_total', 'counter', 'worker_<identifier> status jobs answered.', [['', this.statusRequests]]);
    metric('noshell_gearman_reconnects_total', 'counter', 'Connections to gearmand re-established.', [['', extra.reconnects]]);
    metric('noshell_gearman_servers_connected', 'gauge', 'Job servers the worker is connected to.', [['', extra.connected]]);
    metric('noshell_gearman_results_submitted_total', 'counter', 'Results acknowledged by gearmand.', [['', extra.resultsSubmitted]]);
    metric('noshell_gearman_results_queued', 'gauge', 'Results waiting for a job server.', [['', extra.resultsQueued]]);
    metric('noshell_gearman_results_dropped_total', 'counter', 'Results dropped (queue full or refused).', [['', extra.resultsDropped]]);
    return `${out.join('\n')}\n`;
  }
}
