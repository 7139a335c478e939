// A prom-client registry's text (what registry.metrics() gives), one metric
// at a time in the loop's turn budget. registry.metrics() collects and
// formats every metric in one turn: Node's default metrics took 10.8 ms the
// first time (code not yet compiled: the first scrape after start) and
// 1–3 ms after (measured, Node 20 on the 2-core test machine), in the same
// turn as the start of the runner's series (issue 19: no block over 20 ms).
import type { MetricObject, Registry } from 'prom-client';
import type { LoopBudget } from '../scrape/runner-text';
import { promClient } from './prom-client';

/** What registry.metrics() formats each metric with (prom-client 15; not in its types). */
type FormatsMetric = { getMetricsAsString?: (metric: MetricObject) => Promise<string> };

export async function registryText(registry: Registry, budget: LoopBudget): Promise<string> {
  const format = (registry as unknown as FormatsMetric).getMetricsAsString;
  // OpenMetrics text differs in more than its joins, and a prom-client without the method: left to prom-client whole.
  if (registry.contentType !== promClient().Registry.PROMETHEUS_CONTENT_TYPE || typeof format !== 'function') return registry.metrics();
  const parts: string[] = [];
  // The metrics as they are now, by object, as registry.metrics() takes them: one removed
  // or renamed meanwhile (by another registry it is in) is still formatted.
  for (const m of registry.getMetricsAsArray()) {
    if (budget.due) await budget.next();
    parts.push(await format.call(registry, m));
  }
  // registry.metrics()'s joins.
  return `${parts.join('\n\n')}\n`;
}
