// What noshell run serves: prom-client's default process and Node metrics,
// then the runner's series, rendered in slices as the response takes them
// and served chunked. A prom-client registry renders every sample
// again on each scrape, in one event-loop turn: 1.4–3.6 s at 100,000 checks,
// during which no check was scheduled (issue 19).
import type { Registry } from 'prom-client';
import { ChunkPool } from '../scrape/chunk-pool';
import { CHUNK_BYTES } from '../scrape/line-bytes';
import { metricsBytes, formatMetrics } from '../scrape/runner-text';
import { configureRunnerMetrics, type RunnerMetricsOptions } from '../scrape/metrics-state';
import type { MetricsSource as RunnerSource } from '../model/metrics-snapshot';
import { warmScrape } from '../scrape/scrape-warm';
import type { MetricsSource } from '../serve/metrics-source';
import { registerDefaultMetrics } from './default-metrics';
import { promClient } from './prom-client';
import { registryText } from './registry-text';
import { loopTurns } from '../serve/turn-budget';

/** What createRunnerSource() gives: a MetricsSource that always has refresh(), and the prom-client registry it serves first. */
export type RunnerMetricsSource = MetricsSource & { registry: Registry; refresh: NonNullable<MetricsSource['refresh']> };

export function createRunnerSource(runner: RunnerSource, options: RunnerMetricsOptions = {}): RunnerMetricsSource {
  configureRunnerMetrics(runner, options);
  const { Registry } = promClient();
  const registry = new Registry();
  registerDefaultMetrics(registry);
  const pool = new ChunkPool(CHUNK_BYTES);
  return {
    registry,
    contentType: registry.contentType,
    metrics: async () => (await registry.metrics()) + formatMetrics(runner),
    chunks: async function* chunks() {
      // In the loop's shared budget: a turn that renders and writes this response does both within it.
      yield await registryText(registry, loopTurns);
      yield* metricsBytes(runner, { budget: loopTurns }, pool);
    },
    release: (chunk: Uint8Array) => {
      pool.put(chunk);
    },
    // The checks that changed since the last scrape read between scrapes, in the loop's shared budget.
    refresh: (minAgeMs: number, signal: AbortSignal) => warmScrape(runner, () => loopTurns.due, () => loopTurns.next(), minAgeMs, signal),
  };
}
