// A prom-client registry's text one metric at a time in a turn budget
// (src/metrics/prom/registry-text.ts), against registry.metrics() itself.
import { Counter, Gauge, Histogram, Registry, Summary, collectDefaultMetrics } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registryText } from '../../src/metrics/prom/registry-text';

/** A budget that is always spent (`due`) or never, counting the turns waited for. */
function budget(due: boolean) {
  const b = {
    due,
    nexts: 0,
    next() {
      b.nexts++;
      return new Promise<void>((r) => setImmediate(r));
    },
  };
  return b;
}

/** Metrics whose text does not change between two renders. */
function fixed(contentType?: typeof Registry.PROMETHEUS_CONTENT_TYPE | typeof Registry.OPENMETRICS_CONTENT_TYPE): Registry {
  const registry = contentType === undefined ? new Registry() : new Registry(contentType);
  registry.setDefaultLabels({ site: 'a"b\\c' });
  const c = new Counter({ name: 'jobs_total', help: 'Jobs\ndone \\ all', labelNames: ['queue'], registers: [registry] });
  c.inc({ queue: 'q"1\n' }, 3);
  c.inc({ queue: 'ü 😀' });
  new Gauge({ name: 'depth', help: 'Depth', registers: [registry] }).set(-2.5);
  const h = new Histogram({ name: 'took_seconds', help: 'Took', buckets: [0.1, 1], labelNames: ['op'], registers: [registry] });
  h.observe({ op: 'x' }, 0.05);
  h.observe({ op: 'x' }, 7);
  const s = new Summary({ name: 'size_bytes', help: 'Size', percentiles: [0.5, 0.99], registers: [registry] });
  for (let i = 1; i <= 100; i++) s.observe(i);
  new Gauge({ name: 'unset', help: 'Never set', registers: [registry] });
  return registry;
}

describe('registryText', () => {
  it('is registry.metrics() byte for byte, with a turn waited for before each metric when the budget is spent', async () => {
    const registry = fixed();
    const spent = budget(true);
    const text = await registryText(registry, spent);
    expect(text).toBe(await registry.metrics());
    expect(text).toContain('jobs_total{queue="q\\"1\\n",site="a\\"b\\\\c"} 3');
    expect(spent.nexts).toBe(registry.getMetricsAsArray().length);
    const free = budget(false);
    expect(await registryText(registry, free)).toBe(text);
    expect(free.nexts).toBe(0);
  });

  it('a metric removed from the registry, or renamed by an OpenMetrics registry, during the render is in the text as registry.metrics() would have it', async () => {
    const registry = fixed();
    const open = new Registry(Registry.OPENMETRICS_CONTENT_TYPE);
    const jobs = registry.getSingleMetric('jobs_total')!;
    open.registerMetric(jobs as Counter);
    const whole = await registry.metrics();
    let turns = 0;
    const changing = {
      due: true,
      async next() {
        await new Promise<void>((r) => setImmediate(r));
        if (++turns === 1) {
          // While the render waits: one metric removed, and the counter renamed in place (OpenMetrics drops _total).
          registry.removeSingleMetric('depth');
          await open.metrics();
        }
      },
    };
    const text = await registryText(registry, changing);
    expect(jobs.name).toBe('jobs');
    expect(text).toBe(whole.replace('# HELP jobs_total', '# HELP jobs').replace('# TYPE jobs_total', '# TYPE jobs').replaceAll('\njobs_total{', '\njobs{'));
    expect(text).toContain('# TYPE depth gauge');
  });

  it('an empty registry gives what registry.metrics() gives', async () => {
    const registry = new Registry();
    expect(await registryText(registry, budget(true))).toBe(await registry.metrics());
  });

  it('an OpenMetrics registry is left to prom-client whole (no turn waited for)', async () => {
    const registry = fixed(Registry.OPENMETRICS_CONTENT_TYPE);
    const spent = budget(true);
    const text = await registryText(registry, spent);
    expect(text).toBe(await registry.metrics());
    expect(text.endsWith('# EOF\n')).toBe(true);
    expect(spent.nexts).toBe(0);
  });

  it("Node's default metrics: the same metrics, in the same order, as registry.metrics()", async () => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const spent = budget(true);
    const heads = (t: string) => t.split('\n').filter((l) => l.startsWith('# '));
    const text = await registryText(registry, spent);
    expect(heads(text)).toEqual(heads(await registry.metrics()));
    expect(heads(text).length).toBeGreaterThan(20);
    expect(text).toMatch(/^process_resident_memory_bytes \d+$/m);
    expect(spent.nexts).toBe(registry.getMetricsAsArray().length);
  });
});
