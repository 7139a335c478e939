// popen-noshell/metrics: a CheckRunner's series for Prometheus, in the
// host's prom-client registry or served by noshell's own /metrics endpoint.
// prom-client is loaded on first use, not by this module. The package root
// exports the same names.
export { configureRunnerMetrics } from './scrape/metrics-state';
export type { MetricsChunksOptions } from './scrape/runner-text';
export type { PerfdataOption, PerfdataSeriesOption } from './model/metrics-options';
export { DEFAULT_PERFDATA_LABEL_MAX_BYTES, DEFAULT_PERFDATA_LIMIT } from './model/perfdata-limit';
export { registerRunnerMetrics } from './prom/runner-metrics';
export type { RunnerMetrics, RunnerMetricsOptions } from './prom/runner-metrics';
export { createRunnerRegistry } from './prom/runner-registry';
export { createRunnerSource } from './prom/runner-source';
export { serveMetrics } from './serve/metrics-server';
export type { MetricsServer, ServeMetricsOptions } from './serve/metrics-server';
export type { MetricsSource } from './serve/metrics-source';
