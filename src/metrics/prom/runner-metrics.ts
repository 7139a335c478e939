// A CheckRunner's series in a prom-client Registry: the host daemon's own, or
// the CLI's. Nothing is counted per result: each metric reads the runner when
// the registry is scraped. The families are the ones CheckRunner.metrics()
// renders, so both give the same samples. The snapshot and each family's
// samples are made in slices, each family's in turns of its own, so that
// prom-client formats one family a turn (issue 19: 20,000 checks held the
// loop 1.3-1.6 s in one turn); that formatting is prom-client's, unsliced.
//
// Each metric's get() is replaced rather than filled through collect() and
// set(): prom-client keys a labelled value by `name:value,` joined, so two
// label sets can collide when an id or a perfdata label holds ',' and ':'
// (check "a,label:b" + label "c" against check "a" + label "b,label:c"),
// and one series would silently replace the other.
import type { Counter, Gauge, Registry, Summary } from 'prom-client';
import { allFamilies } from '../model/families';
import { configureRunnerMetrics, metricsStateOf, type RunnerMetricsOptions } from '../scrape/metrics-state';
import type { MetricFamily, MetricsSource, Snapshot } from '../model/metrics-snapshot';
import { promClient } from './prom-client';
import { slicedSamples, slicedSnapshot } from './sliced-snapshot';
import { loopTurns } from '../serve/turn-budget';

export type { RunnerMetricsOptions } from '../scrape/metrics-state';

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
  // registry.metrics() calls every get() in one synchronous pass; prom-client
  // formats a family as soon as its get() resolves, in that turn. So the
  // families take turns, each once the one before has been given, and
  // scrapes take turns too: a get() joins the scrape whose snapshot is
  // waiting or being made (every get() of one pass, and of scrapes that
  // came meanwhile), else begins the next one, whose snapshot is made once
  // every get() before it has been served. Two snapshots at most, none older
  // than the scrape before (a scrape joined for as long as it was pending
  // froze the metrics of two clients scraping back to back: outside review).
  type Got = Awaited<ReturnType<AnyMetric['get']>>;
  // `got`: each family's answer, made once per scrape however many scrapes joined it.
  interface Scrape { snap: Promise<Snapshot>; last: Promise<unknown>; got: Map<MetricFamily, Promise<Got>> }
  let joinable: Scrape | null = null;
  let tail: Promise<unknown> = Promise.resolve();
  const begin = (): Scrape => {
    if (joinable !== null) return joinable;
    const before = tail;
    const snap = before.then(() => slicedSnapshot(runner, state.limit, state.exposure, loopTurns), () => slicedSnapshot(runner, state.limit, state.exposure, loopTurns));
    const s: Scrape = { snap, last: snap, got: new Map() };
    joinable = s;
    // Made (or failed): later gets begin a new one; a failed one is not handed to a retry.
    const done = () => {
      if (joinable === s) joinable = null;
    };
    snap.then(done, done);
    return s;
  };
  for (const f of allFamilies) {
    const metric = makeMetric(f, registry);
    // Read at scrape time: an OpenMetrics registry renames counters in place.
    const fields = metric as unknown as { name: string; type: string; aggregator: string };
    const get = async (): Promise<Got> => {
      const s = begin();
      let got = s.got.get(f);
      if (got === undefined) {
        const after = s.last;
        got = (async () => {
          await after.catch(() => undefined);
          const samples = await slicedSamples(f, await s.snap, loopTurns);
          return {
            name: fields.name, help: f.help, type: fields.type, aggregator: fields.aggregator,
            values: samples.map((v) => ({ labels: v.labels, value: v.value, metricName: v.suffix === undefined ? undefined : f.name + v.suffix })),
          } as unknown as Got;
        })();
        s.got.set(f, got);
        s.last = got;
        tail = got;
      }
      // Each caller its own object (getMetricsAsJSON hands it on); the values are shared.
      return { ...(await got) };
    };
    Object.defineProperty(metric, 'get', { value: get, configurable: true, writable: true });
  }
  const names = allFamilies.map((f) => f.name);
  return { names, unregister: () => names.forEach((n) => registry.removeSingleMetric(n)) };
}
