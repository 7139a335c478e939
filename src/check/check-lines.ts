// One check's sample lines of one per-check family, written straight from
// its scrape view into the scrape's buffers (issue 19): the families'
// samples() build a Sample and a label object per line, what a from-scratch
// render and prom-client need, and cost ~26 µs a check with five perfdata
// items. A scrape calls these once per check and family, and nothing is
// made per perfdata item but the number's text: units are looked up and
// values scaled as the line is written. The text must come out byte for
// byte as renderFamilies gives it (test/metrics-render.test.ts renders both
// over random histories).
import type { CheckView } from './check-view';
import type { LineBytes } from './line-bytes';
import type { MetricFamily } from './metrics-snapshot';
import type { PerfDatum } from './perfdata';
import { scale, unitFactor } from './perfdata-units';
import type { ThresholdRange } from './range';

/** Writes a family's lines of one check, each ending in a line feed (none for some checks). */
export type LineWriter = (c: CheckView, out: LineBytes) => void;

const bytes = (s: string) => Buffer.from(s, 'latin1');

/** `name{check="<id>"} v`: a check's line without more labels. */
function line(out: LineBytes, name: Buffer, c: CheckView, v: number): void {
  out.line(name, c.text, c.at, -1, null, v);
}

/** `name{check="<id>",label="<label>",uom="<base unit>"<more>} v` of item j. */
function seriesLine(out: LineBytes, name: Buffer, c: CheckView, j: number, more: Buffer | null, v: number): void {
  out.line(name, c.text, c.at, c.at + 1 + j, more, v);
}

// Each family's writer is a function of its own, the figure read in it: one
// shared writer calling a reader per family made every call site see 17
// targets, and V8 inlined none of them.

const BOUND = {
  insideLow: bytes(',alert="inside",bound="low"'),
  insideHigh: bytes(',alert="inside",bound="high"'),
  outsideLow: bytes(',alert="outside",bound="low"'),
  outsideHigh: bytes(',alert="outside",bound="high"'),
};

function thresholdLines(out: LineBytes, name: Buffer, c: CheckView, j: number, p: PerfDatum, r: ThresholdRange): void {
  const f = unitFactor(p.uom);
  // Finite in the base unit (a huge end in PB can overflow it).
  const low = scale(r.start, f);
  const high = scale(r.end, f);
  if (Number.isFinite(low)) seriesLine(out, name, c, j, r.alertInside ? BOUND.insideLow : BOUND.outsideLow, low);
  if (Number.isFinite(high)) seriesLine(out, name, c, j, r.alertInside ? BOUND.insideHigh : BOUND.outsideHigh, high);
}

const NAMES = {
  interval: 'noshell_check_interval_seconds',
  running: 'noshell_check_running',
  state: 'noshell_check_state',
  stateType: 'noshell_check_state_type',
  attempt: 'noshell_check_attempt',
  maxAttempts: 'noshell_check_max_attempts',
  lastRun: 'noshell_check_last_run_timestamp_seconds',
  lastChange: 'noshell_check_last_state_change_timestamp_seconds',
  execution: 'noshell_check_last_execution_seconds',
  latency: 'noshell_check_last_latency_seconds',
  perfdata: 'noshell_check_perfdata',
  warn: 'noshell_check_perfdata_warn',
  crit: 'noshell_check_perfdata_crit',
  min: 'noshell_check_perfdata_min',
  max: 'noshell_check_perfdata_max',
  labelSets: 'noshell_check_perfdata_label_sets',
  dropped: 'noshell_check_perfdata_dropped_total',
} as const;
const N = Object.fromEntries(Object.entries(NAMES).map(([k, v]) => [k, bytes(v)])) as Record<keyof typeof NAMES, Buffer>;
const REASON = { limit: bytes(',reason="limit"'), duplicate: bytes(',reason="duplicate"'), tooLong: bytes(',reason="too_long"') };

function droppedLine(out: LineBytes, c: CheckView, reason: Buffer, n: number): void {
  out.line(N.dropped, c.text, c.at, -1, reason, n);
}

const writers = new Map<string, LineWriter>([
  [NAMES.interval, (c, out) => {
    line(out, N.interval, c, c.interval / 1000);
  }],
  [NAMES.running, (c, out) => {
    line(out, N.running, c, c.running ? 1 : 0);
  }],
  [NAMES.state, (c, out) => {
    const l = c.last;
    if (l === null) return;
    line(out, N.state, c, l.state);
  }],
  [NAMES.stateType, (c, out) => {
    const l = c.last;
    if (l === null) return;
    line(out, N.stateType, c, l.stateType === 'HARD' ? 1 : 0);
  }],
  [NAMES.attempt, (c, out) => {
    const l = c.last;
    if (l === null) return;
    line(out, N.attempt, c, l.attempt);
  }],
  [NAMES.maxAttempts, (c, out) => {
    const l = c.last;
    if (l === null) return;
    line(out, N.maxAttempts, c, l.maxAttempts);
  }],
  [NAMES.lastRun, (c, out) => {
    const l = c.last;
    if (l === null) return;
    line(out, N.lastRun, c, l.finishedAt / 1000);
  }],
  [NAMES.lastChange, (c, out) => {
    if (c.last === null) return;
    line(out, N.lastChange, c, c.changedAt / 1000);
  }],
  [NAMES.execution, (c, out) => {
    const l = c.last;
    if (l === null) return;
    line(out, N.execution, c, l.durationMs / 1000);
  }],
  [NAMES.latency, (c, out) => {
    const l = c.last;
    if (l === null) return;
    line(out, N.latency, c, l.latencyMs / 1000);
  }],
  [NAMES.perfdata, (c, out) => {
    if (c.perf === null) return;
    const items = c.perf.items;
    for (let j = 0; j < items.length; j++) {
      const p = items[j];
      seriesLine(out, N.perfdata, c, j, null, p.value === null ? NaN : scale(p.value, unitFactor(p.uom)));
    }
  }],
  [NAMES.warn, (c, out) => {
    if (c.perf === null) return;
    const items = c.perf.items;
    for (let j = 0; j < items.length; j++) if (items[j].warn !== undefined) thresholdLines(out, N.warn, c, j, items[j], items[j].warn!);
  }],
  [NAMES.crit, (c, out) => {
    if (c.perf === null) return;
    const items = c.perf.items;
    for (let j = 0; j < items.length; j++) if (items[j].crit !== undefined) thresholdLines(out, N.crit, c, j, items[j], items[j].crit!);
  }],
  [NAMES.min, (c, out) => {
    if (c.perf === null) return;
    const items = c.perf.items;
    for (let j = 0; j < items.length; j++) {
      const p = items[j];
      if (p.min === undefined) continue;
      seriesLine(out, N.min, c, j, null, scale(p.min, unitFactor(p.uom)));
    }
  }],
  [NAMES.max, (c, out) => {
    if (c.perf === null) return;
    const items = c.perf.items;
    for (let j = 0; j < items.length; j++) {
      const p = items[j];
      if (p.max === undefined) continue;
      seriesLine(out, N.max, c, j, null, scale(p.max, unitFactor(p.uom)));
    }
  }],
  [NAMES.labelSets, (c, out) => {
    if (c.perf === null) return;
    line(out, N.labelSets, c, c.perf.labelSets);
  }],
  [NAMES.dropped, (c, out) => {
    if (c.perf === null) return;
    const d = c.perf.dropped;
    droppedLine(out, c, REASON.limit, d.limit);
    droppedLine(out, c, REASON.duplicate, d.duplicate);
    droppedLine(out, c, REASON.tooLong, d.tooLong);
  }],
]);

/** Names of `families` this has no writer for. */
export function genericFamilies(families: readonly MetricFamily[]): string[] {
  return families.filter((f) => !writers.has(f.name)).map((f) => f.name);
}

/** The writer of a per-check family; a TypeError for one it has none for (a family added without its writer). */
export function lineWriter(f: MetricFamily): LineWriter {
  const w = writers.get(f.name);
  if (w === undefined) throw new TypeError(`no line writer for the per-check family ${f.name}`);
  return w;
}
