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
import { allFamilies } from '../check/metrics';
import { perfdataLimitOf } from '../check/perfdata-limit';
import { takeSnapshot, type MetricFamily, type MetricsSource, type Snapshot } from '../check/metrics-snapshot';
import { promClient } from './prom-client';

export interface RunnerMetricsOptions {
  /** Perfdata label sets each check may hold (default 100); shared with runner.metrics(). */
  perfdataLimit?: number | undefined;
  /** Longest perfdata label or unit exported, in UTF-8 bytes (default 256); longer items are counted as reason="too_long". */
  perfdataLabelMaxBytes?: number | undefined;
}

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
  const { perfdataLimit, perfdataLabelMaxBytes } = options;
  if (perfdataLimit !== undefined && (!Number.isInteger(perfdataLimit) || perfdataLimit < 0)) {
    throw new TypeError(`perfdataLimit must be a non-negative integer, got ${String(perfdataLimit)}`);
  }
  if (perfdataLabelMaxBytes !== undefined && (!Number.isInteger(perfdataLabelMaxBytes) || perfdataLabelMaxBytes < 1)) {
    throw new TypeError(`perfdataLabelMaxBytes must be a positive integer, got ${String(perfdataLabelMaxBytes)}`);
  }
  for (const f of allFamilies) {
    if (registry.getSingleMetric(f.name) !== undefined) throw new Error(`registerRunnerMetrics: ${f.name} is registered already`);
  }
  const limit = perfdataLimitOf(runner, perfdataLimit, perfdataLabelMaxBytes);
  // registry.metrics() calls every get() in one synchronous pass: one
  // snapshot serves them all, dropped once that pass is over.
  let cached: Snapshot | null = null;
  const snapshot = (): Snapshot => {
    if (cached === null) {
      cached = takeSnapshot(runner, limit);
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
