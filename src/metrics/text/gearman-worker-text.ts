// A GearmanWorker's counters in the Prometheus text exposition format
// (0.0.4): what `noshell gearman-worker --metrics-port` serves. The worker
// counts (gearman/worker/worker-metrics.ts); the series, their names and
// their text are written here.

/** Upper bounds (seconds) of the job latency histogram's buckets. */
export const LATENCY_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** What the text is made from: a worker's counters as they stand. */
export interface WorkerFigures {
  /** Jobs by `${queue}\0${result}`. */
  readonly jobs: ReadonlyMap<string, number>;
  readonly timeouts: number;
  readonly running: number;
  readonly checkCpuSeconds: number;
  readonly statusRequests: number;
  readonly viaShell: number;
  /** Observations at or below each of LATENCY_BUCKETS. */
  readonly buckets: readonly number[];
  readonly latencySum: number;
  readonly latencyCount: number;
}

/** What the worker knows beside its counters. */
export interface WorkerGauges {
  maxWorker: number;
  reconnects: number;
  resultsSubmitted: number;
  resultsQueued: number;
  resultsDropped: number;
  connected: number;
}

/** A label value escaped as the text format asks: backslash, double quote, newline. */
function labelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export function formatWorkerMetrics(c: WorkerFigures, extra: WorkerGauges): string {
  const out: string[] = [];
  const metric = (name: string, type: string, help: string, samples: Array<[string, number]>) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, v] of samples) out.push(`${name}${labels} ${v}`);
  };
  metric('noshell_gearman_jobs_total', 'counter', 'Jobs taken from gearmand, by queue and result.',
    [...c.jobs.entries()].map(([k, v]) => {
      const [queue, result] = k.split('\0');
      return [`{queue="${labelValue(queue)}",result="${result}"}`, v];
    }));
  metric('noshell_gearman_job_timeouts_total', 'counter', 'Jobs killed by their timeout.', [['', c.timeouts]]);
  metric('noshell_gearman_jobs_running', 'gauge', 'Jobs running now.', [['', c.running]]);
  metric('noshell_gearman_max_worker', 'gauge', 'Jobs allowed at once (max-worker).', [['', extra.maxWorker]]);
  metric('noshell_gearman_jobs_via_shell_total', 'counter', 'Jobs whose command line needed /bin/sh.', [['', c.viaShell]]);
  metric('noshell_gearman_check_cpu_seconds_total', 'counter', 'User+system CPU of the checks (rusage).', [['', Number(c.checkCpuSeconds.toFixed(6))]]);
  out.push('# HELP noshell_gearman_job_latency_seconds Job grabbed to result submitted.',
    '# TYPE noshell_gearman_job_latency_seconds histogram');
  LATENCY_BUCKETS.forEach((b, i) => out.push(`noshell_gearman_job_latency_seconds_bucket{le="${b}"} ${c.buckets[i]}`));
  out.push(`noshell_gearman_job_latency_seconds_bucket{le="+Inf"} ${c.latencyCount}`,
    `noshell_gearman_job_latency_seconds_sum ${Number(c.latencySum.toFixed(6))}`,
    `noshell_gearman_job_latency_seconds_count ${c.latencyCount}`);
  metric('noshell_gearman_status_requests_total', 'counter', 'worker_<identifier> status jobs answered.', [['', c.statusRequests]]);
  metric('noshell_gearman_reconnects_total', 'counter', 'Connections to gearmand re-established.', [['', extra.reconnects]]);
  metric('noshell_gearman_servers_connected', 'gauge', 'Job servers the worker is connected to.', [['', extra.connected]]);
  metric('noshell_gearman_results_submitted_total', 'counter', 'Results acknowledged by gearmand.', [['', extra.resultsSubmitted]]);
  metric('noshell_gearman_results_queued', 'gauge', 'Results waiting for a job server.', [['', extra.resultsQueued]]);
  metric('noshell_gearman_results_dropped_total', 'counter', 'Results dropped (queue full or refused).', [['', extra.resultsDropped]]);
  return `${out.join('\n')}\n`;
}
