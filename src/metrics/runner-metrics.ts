// A CheckRunner's series in a prom-client Registry: the host daemon's own, or
// the CLI's. Nothing is counted per result: each metric reads the runner when
// the registry is scraped. The families are the ones CheckRunner.metrics()
// renders, so both give the same samples.
//
// Each metric's get() is replaced rather than filled through collect() and
// set(): prom-client keys a labelled value by `name:value,` joined, so two
// label sets can collide when an id or a perfdata label holds ',' and ':'
// (check "a,label:b" + label "c" against check "a" + label "b,label:c"),
// and one series would silently replace the other.
import type { Counter, Gauge, Registry, Summary } from 'prom-client';
import { allFamilies } from '../check/families';
import { configureRunnerMetrics, metricsStateOf, type RunnerMetricsOptions } from '../check/metrics-state';
import { takeSnapshot, type MetricFamily, type MetricsSource, type Snapshot } from '../check/metrics-snapshot';
import { promClient } from './prom-client';

export type { RunnerMetricsOptions } from '../check/metrics-state';

export interface RunnerMetrics {
  /** The metric names registered. */
  readonly names: readonly string[];
  /** Removes them from the registry. */
  unregister(): void;
}

type AnyMetric = Gauge | Counter | Summary;

function makeMetric(f: MetricFamily, registry: Registry): AnyMetric {
  const { Counter, Gauge, Summary } = promClient();
  const config = { name: f.name, help: f.help, labelNames: [...f.labelNames], registers: [registry] };
  if (f.type === 'counter') return new Counter(config);
  if (f.type === 'summary') return new Summary(config);
  return new Gauge(config);
}

/**
 * Registers the runner's series (aggregate and per check) in `registry`. The
 * registry must not hold these names yet (one runner per registry).
 */
export function registerRunnerMetrics(runner: MetricsSource, registry: Registry, options: RunnerMetricsOptions = {}): RunnerMetrics {
  for (const f of allFamilies) {
    if (registry.getSingleMetric(f.name) !== undefined) throw new Error(`registerRunnerMetrics: ${f.name} is registered already`);
  }
  configureRunnerMetrics(runner, options);
  const state = metricsStateOf(runner);
  // registry.metrics() calls every get() in one synchronous pass: one
  // snapshot serves them all, dropped once that pass is over.
  let cached: Snapshot | null = null;
  const snapshot = (): Snapshot => {
    if (cached === null) {
      cached = takeSnapshot(runner, state.limit, state.exposure);
      queueMicrotask(() => (cached = null));
    }
    return cached;
  };
  for (const f of allFamilies) {
    const metric = makeMetric(f, registry);
    // Read at scrape time: an OpenMetrics registry renames counters in place.
    const fields = metric as unknown as { name: string; type: string; aggregator: string };
    const get = async () => ({
      name: fields.name, help: f.help, type: fields.type, aggregator: fields.aggregator,
      values: f.samples(snapshot()).map((s) => ({
        labels: s.labels, value: s.value, metricName: s.suffix === undefined ? undefined : f.name + s.suffix,
      })),
    });
    Object.defineProperty(metric, 'get', { value: get, configurable: true, writable: true });
  }
  const names = allFamilies.map((f) => f.name);
  return { names, unregister: () => names.forEach((n) => registry.removeSingleMetric(n)) };
}
