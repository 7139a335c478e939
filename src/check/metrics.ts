// Runner statistics in the Prometheus text exposition format (version 0.0.4).
import type { RunnerStats } from './definition';

function num(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

export function formatMetrics(s: RunnerStats): string {
  const out: string[] = [];
  const metric = (name: string, type: string, help: string, samples: Array<[string, number]>) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) out.push(`${name}${labels} ${num(value)}`);
  };
  metric('noshell_checks', 'gauge', 'Checks configured.', [['', s.checks]]);
  metric('noshell_checks_running', 'gauge', 'Checks running now.', [['', s.running]]);
  metric('noshell_checks_queued', 'gauge', 'Checks due and waiting for a slot.', [['', s.queued]]);
  metric('noshell_check_results_total', 'counter', 'Completed check runs by state.',
    Object.entries(s.byState).map(([state, n]) => [`{state="${state}"}`, n]));
  metric('noshell_check_timeouts_total', 'counter', 'Check runs killed by their timeout.', [['', s.timedOut]]);
  metric('noshell_check_spawn_errors_total', 'counter', 'Check runs whose plugin could not be started.', [['', s.spawnErrors]]);
  metric('noshell_check_truncated_total', 'counter', 'Check runs whose output was cut at maxOutput.', [['', s.truncated]]);
  metric('noshell_check_via_shell_total', 'counter', 'Check runs that needed /bin/sh.', [['', s.viaShell]]);
  metric('noshell_check_skipped_total', 'counter', 'Regular runs skipped because the previous run overran.', [['', s.skipped]]);
  metric('noshell_checks_per_second', 'gauge', 'Completed check runs per second, last 10 s.', [['', s.checksPerSecond]]);
  const summary = (name: string, help: string, p: RunnerStats['latencyMs']) =>
    metric(name, 'summary', help, [
      ['{quantile="0.5"}', p.p50 / 1000], ['{quantile="0.9"}', p.p90 / 1000], ['{quantile="0.99"}', p.p99 / 1000],
      ['{quantile="1"}', p.max / 1000],
    ]);
  summary('noshell_check_latency_seconds', 'Scheduled to started, recent runs.', s.latencyMs);
  summary('noshell_check_execution_seconds', 'Started to reaped, recent runs.', s.executionMs);
  return `${out.join('\n')}\n`;
}
