// The registry noshell run serves: prom-client's default process and Node
// metrics (CPU, memory, fds, event-loop lag, GC; default-metrics.ts) beside the runner's series.
import type { Registry } from 'prom-client';
import { registerDefaultMetrics } from './default-metrics';
import { promClient } from './prom-client';
import { registerRunnerMetrics, type RunnerMetricsOptions } from './runner-metrics';
import type { MetricsSource } from '../model/metrics-snapshot';

export function createRunnerRegistry(runner: MetricsSource, options: RunnerMetricsOptions = {}): Registry {
  const { Registry } = promClient();
  const registry = new Registry();
  registerDefaultMetrics(registry);
  registerRunnerMetrics(runner, registry, options);
  return registry;
}
