// The Prometheus text exposition format (version 0.0.4): sample lines,
// family headers, and a whole render from a snapshot. renderFamilies is the
// from-scratch render; runner scrapes are written a family at a time from
// the scrape's columns (metrics.ts, check-view.ts) and must come out byte for
// byte the same.
import type { MetricFamily, Snapshot } from '../model/metrics-snapshot';

/** A sample value as the format writes it. */
export function num(v: number): string {
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

function labelText(labels: Readonly<Record<string, string>>): string {
  let text = '';
  for (const k in labels) text += `${text === '' ? '{' : ','}${k}="${escapeLabelValue(labels[k])}"`;
  return text === '' ? text : `${text}}`;
}

/** The # HELP and # TYPE lines of a family, each ending in a line feed. */
export function familyHeader(f: MetricFamily): string {
  return `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
}

/**
 * A family's sample lines for `snap`, each ending in a line feed ('' for
 * none), as one flat string: a scrape that joins 100,000s of kept ropes
 * walks each of them again (6.7 s of 8 for 20,000 checks).
 */
export function sampleLines(f: MetricFamily, snap: Snapshot): string {
  const lines: string[] = [];
  for (const s of f.samples(snap)) lines.push(`${f.name}${s.suffix ?? ''}${labelText(s.labels)} ${num(s.value)}\n`);
  return flatten(lines.join(''));
}

/**
 * V8 keeps concatenations (template literals too) as ropes until something
 * needs them flat, and a join of one element is that element: a check's
 * kept pieces were trees of ~90 cons cells, ~6 KB of heap for ~1.5 KB of
 * text. Running a regular expression over a string flattens it in place
 * (measured on Node 20, 22, 24 and 26; Number(s), the usual trick, did not on
 * 20 and charCodeAt did not on 22 or 26). The expression is one character,
 * linear in the text.
 */
const NUL = /\0/;
export function flatten(s: string): string {
  NUL.test(s);
  return s;
}

/** Every family of `snap`, rendered from scratch. */
export function renderFamilies(families: readonly MetricFamily[], snap: Snapshot): string {
  const out: string[] = [];
  for (const f of families) {
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples(snap)) out.push(`${f.name}${s.suffix ?? ''}${labelText(s.labels)} ${num(s.value)}`);
  }
  return `${out.join('\n')}\n`;
}
