// What noshell run serves: prom-client's default process and Node metrics,
// then the runner's series from its kept per-check pieces, rendered in
// slices and served chunked. A prom-client registry renders every sample
// again on each scrape, in one event-loop turn: 1.4–3.6 s at 100,000 checks,
// during which no check was scheduled (issue 19).
import type { Registry } from 'prom-client';
import { metricsChunks, metricsParts, formatMetrics } from '../check/metrics';
import { configureRunnerMetrics, type RunnerMetricsOptions } from '../check/metrics-state';
import type { MetricsSource as RunnerSource } from '../check/metrics-snapshot';
import type { MetricsSource } from './metrics-server';
import { promClient } from './prom-client';

export function createRunnerSource(runner: RunnerSource, options: RunnerMetricsOptions = {}): MetricsSource & { registry: Registry } {
  configureRunnerMetrics(runner, options);
  const { collectDefaultMetrics, Registry } = promClient();
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    contentType: registry.contentType,
    metrics: async () => (await registry.metrics()) + formatMetrics(runner),
    chunks: async function* chunks() {
      yield await registry.metrics();
      yield* metricsChunks(runner);
    },
    parts: async function* parts() {
      yield [await registry.metrics()];
      yield* metricsParts(runner);
    },
  };
}
