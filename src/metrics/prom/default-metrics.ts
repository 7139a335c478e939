// prom-client's default process and Node metrics (CPU, memory, fds, event-loop
// lag, GC) on a registry, less the three gauges whose names end in _total:
// nodejs_active_handles_total, _requests_total and _resources_total. A
// `_total` suffix is for counters, so `promtool check metrics` fails the whole
// page on them (exit 3); each is the sum of its per-type gauge, which stays
// (sum(nodejs_active_handles) is the same number).
import type { Registry } from 'prom-client';
import { promClient } from './prom-client';

export const LEFT_OUT_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'] as const;

export function registerDefaultMetrics(registry: Registry): void {
  promClient().collectDefaultMetrics({ register: registry });
  for (const name of LEFT_OUT_DEFAULTS) registry.removeSingleMetric(name);
}
