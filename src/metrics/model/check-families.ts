// One set of series per configured check, labelled check="<id>", read from
// the check's last result. A check that has not run yet has only its
// interval and running series: `noshell_check_interval_seconds unless on(check)
// noshell_check_last_run_timestamp_seconds` finds it.
import type { RunFigures } from '../../check/model/last-run';
import type { MetricFamily, Sample, Snapshot } from './metrics-snapshot';

function perCheck(name: string, help: string, read: (last: RunFigures, s: Snapshot['checks'][number]) => number): MetricFamily {
  return {
    name, help, type: 'gauge', labelNames: ['check'],
    samples: (snap) => {
      const out: Sample[] = [];
      for (const c of snap.checks) if (c.status.last !== null) out.push({ labels: { check: c.status.id }, value: read(c.status.last, c) });
      return out;
    },
  };
}

export const checkFamilies: readonly MetricFamily[] = [
  {
    name: 'noshell_check_interval_seconds', help: 'Seconds between regular runs of the check.', type: 'gauge', labelNames: ['check'],
    samples: (s) => s.checks.map((c) => ({ labels: { check: c.status.id }, value: c.status.definition.interval / 1000 })),
  },
  {
    name: 'noshell_check_running', help: '1 while the check runs.', type: 'gauge', labelNames: ['check'],
    samples: (s) => s.checks.map((c) => ({ labels: { check: c.status.id }, value: c.status.running ? 1 : 0 })),
  },
  perCheck('noshell_check_state', 'State of the last result: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.', (r) => r.state),
  perCheck('noshell_check_state_type', 'State type of the last result: 0 SOFT, 1 HARD (as Icinga 2).', (r) => (r.stateType === 'HARD' ? 1 : 0)),
  perCheck('noshell_check_attempt', 'Attempt of the last result (1 after OK or a HARD state).', (r) => r.attempt),
  perCheck('noshell_check_max_attempts', 'Attempts that make a non-OK state HARD.', (r) => r.maxAttempts),
  perCheck('noshell_check_last_run_timestamp_seconds', 'When the last run ended, Unix time.', (r) => r.finishedAt / 1000),
  perCheck('noshell_check_last_state_change_timestamp_seconds', 'When the state last changed (or the first result came), Unix time.',
    (_r, c) => (c.status.lastStateChangeAt ?? NaN) / 1000),
  perCheck('noshell_check_last_execution_seconds', 'Started to reaped, last run.', (r) => r.durationMs / 1000),
  perCheck('noshell_check_last_latency_seconds', 'Scheduled to started, last run.', (r) => r.latencyMs / 1000),
];
