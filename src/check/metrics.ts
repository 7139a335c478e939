// A runner's series in the Prometheus text exposition format (version 0.0.4),
// rendered synchronously: CheckRunner.metrics() has always returned a string.
// prom-client renders the same families (src/metrics/runner-metrics.ts).
import { checkFamilies } from './check-families';
import { perfdataLimitOf } from './perfdata-limit';
import { perfdataFamilies } from './perfdata-families';
import { runnerFamilies } from './runner-families';
import { takeSnapshot, type MetricFamily, type MetricsSource, type Snapshot } from './metrics-snapshot';

export const allFamilies: readonly MetricFamily[] = [...runnerFamilies, ...checkFamilies, ...perfdataFamilies];

function num(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

// Check ids and perfdata labels are the user's: any text, so escaped as the
// format says (backslash, double quote, line feed; HELP only the first and last).
const NEEDS_ESCAPE = /[\\"\n]/;

export function escapeLabelValue(v: string): string {
  if (!NEEDS_ESCAPE.test(v)) return v;
  return v.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

function escapeHelp(v: string): string {
  return v.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'));
}

// Rendered label sets, by the object: perfdata label objects outlive a scrape.
const rendered = new WeakMap<object, string>();

function renderLabels(labels: Readonly<Record<string, string>>): string {
  let text = rendered.get(labels);
  if (text === undefined) {
    text = '';
    for (const k in labels) text += `${text === '' ? '{' : ','}${k}="${escapeLabelValue(labels[k])}"`;
    if (text !== '') text += '}';
    rendered.set(labels, text);
  }
  return text;
}

export function renderFamilies(families: readonly MetricFamily[], snap: Snapshot): string {
  const out: string[] = [];
  for (const f of families) {
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples(snap)) out.push(`${f.name}${s.suffix ?? ''}${renderLabels(s.labels)} ${num(s.value)}`);
  }
  return `${out.join('\n')}\n`;
}

/** Every series of a runner, aggregate and per check. */
export function formatMetrics(runner: MetricsSource): string {
  return renderFamilies(allFamilies, takeSnapshot(runner, perfdataLimitOf(runner)));
}
