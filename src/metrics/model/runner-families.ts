// The runner's aggregate series (names kept from before per-check series).
import type { Percentiles } from '../../check/model/stats';
import type { MetricFamily, Sample, Snapshot } from './metrics-snapshot';

const one = (value: number): Sample[] => [{ labels: {}, value }];

function gauge(name: string, help: string, read: (s: Snapshot) => number): MetricFamily {
  return { name, help, type: 'gauge', labelNames: [], samples: (s) => one(read(s)) };
}

function counter(name: string, help: string, read: (s: Snapshot) => number): MetricFamily {
  return { name, help, type: 'counter', labelNames: [], samples: (s) => one(read(s)) };
}

// Quantiles over the recent window, _sum and _count over the runner's life;
// the runner keeps milliseconds, Prometheus wants seconds.
function summary(name: string, help: string, read: (s: Snapshot) => Percentiles): MetricFamily {
  return {
    name, help, type: 'summary', labelNames: [],
    samples: (s): Sample[] => {
      const p = read(s);
      return [
        { labels: { quantile: '0.5' }, value: p.p50 / 1000 },
        { labels: { quantile: '0.9' }, value: p.p90 / 1000 },
        { labels: { quantile: '0.99' }, value: p.p99 / 1000 },
        { labels: { quantile: '1' }, value: p.max / 1000 },
        { labels: {}, value: p.sum / 1000, suffix: '_sum' },
        { labels: {}, value: p.count, suffix: '_count' },
      ];
    },
  };
}

export const runnerFamilies: readonly MetricFamily[] = [
  gauge('noshell_checks', 'Checks configured.', (s) => s.stats.checks),
  gauge('noshell_checks_running', 'Checks running now.', (s) => s.stats.running),
  gauge('noshell_checks_queued', 'Checks due and waiting for a slot.', (s) => s.stats.queued),
  {
    name: 'noshell_check_results_total', help: 'Completed check runs by state.', type: 'counter', labelNames: ['state'],
    samples: (s) => Object.entries(s.stats.byState).map(([state, value]) => ({ labels: { state }, value })),
  },
  counter('noshell_check_timeouts_total', 'Check runs killed by their timeout.', (s) => s.stats.timedOut),
  counter('noshell_check_spawn_errors_total', 'Check runs whose plugin could not be started.', (s) => s.stats.spawnErrors),
  counter('noshell_check_truncated_total', 'Check runs whose output was cut at maxOutput.', (s) => s.stats.truncated),
  counter('noshell_check_via_shell_total', 'Check runs that needed /bin/sh.', (s) => s.stats.viaShell),
  counter('noshell_check_skipped_total', 'Regular runs skipped because the previous run overran.', (s) => s.stats.skipped),
  gauge('noshell_checks_per_second', 'Completed check runs per second, last 10 s.', (s) => s.stats.checksPerSecond),
  summary('noshell_check_latency_seconds', 'Scheduled to started, recent runs.', (s) => s.stats.latencyMs),
  summary('noshell_check_execution_seconds', 'Started to reaped, recent runs.', (s) => s.stats.executionMs),
  gauge('noshell_executor_queued', 'Execs waiting for the executor thread to spawn them.', (s) => s.stats.executor.queued),
  gauge('noshell_executor_running', 'Children the executor thread is watching.', (s) => s.stats.executor.running),
  counter('noshell_executor_busy_seconds_total', 'Time the executor thread spent working rather than waiting.',
    (s) => s.stats.executor.busyMs / 1000),
  counter('noshell_executor_spawned_total', 'Children the executor thread has started.', (s) => s.stats.executor.spawned),
];
