// The Prometheus text exposition format (version 0.0.4): sample lines,
// family headers, and a whole render from a snapshot. renderFamilies is the
// from-scratch render; runner scrapes are assembled from per-check pieces
// (metrics.ts) and must come out byte for byte the same.
import type { MetricFamily, Snapshot } from './metrics-snapshot';

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

/** The # HELP and # TYPE lines of a family, each ending in a line feed. */
export function familyHeader(f: MetricFamily): string {
  return `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
}

/** A family's sample lines for `snap`, each ending in a line feed ('' for none). */
export function sampleLines(f: MetricFamily, snap: Snapshot): string {
  let text = '';
  for (const s of f.samples(snap)) text += `${f.name}${s.suffix ?? ''}${renderLabels(s.labels)} ${num(s.value)}\n`;
  return text;
}

/** Every family of `snap`, rendered from scratch. */
export function renderFamilies(families: readonly MetricFamily[], snap: Snapshot): string {
  const out: string[] = [];
  for (const f of families) {
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples(snap)) out.push(`${f.name}${s.suffix ?? ''}${renderLabels(s.labels)} ${num(s.value)}`);
  }
  return `${out.join('\n')}\n`;
}
