// One check's sample lines per per-check family, written straight from its
// snapshot (issue 19). The families' samples() build a Sample and a label
// object per line, which is what a from-scratch render and prom-client
// need; kept pieces are rendered once per result of every check, and that
// generic way cost ~26 µs a check (five perfdata items, 23 lines): the first
// scrape after 100,000 checks had reported took 4.6 s. This takes ~4 µs and
// must come out byte for byte the same (test/metrics-pieces.test.ts renders
// both over random histories). A per-check family it has no writer for is
// rendered the generic way.
import type { CheckSnapshot, MetricFamily, Snapshot } from './metrics-snapshot';
import { escapeLabelValue, flatten, num, sampleLines } from './metrics-text';
import type { PerfSeries } from './perfdata-limit';
import type { ThresholdRange } from './range';

/** `{check="<id>"` (no closing brace): every per-check line starts its labels so. */
type Open = string;
type Writer = (c: CheckSnapshot, open: Open) => string;

function lastLine(name: string, read: (c: CheckSnapshot) => number): [string, Writer] {
  return [name, (c, open) => (c.status.last === null ? '' : `${name}${open}} ${num(read(c))}\n`)];
}

function seriesOpen(open: Open, p: PerfSeries): string {
  return `${open},label="${escapeLabelValue(p.label)}",uom="${escapeLabelValue(p.uom)}"`;
}

function itemLines(name: string, read: (p: PerfSeries) => number | undefined): [string, Writer] {
  return [name, (c, open) => {
    if (c.perf === null) return '';
    let text = '';
    for (const p of c.perf.series) {
      const v = read(p);
      if (v !== undefined) text += `${name}${seriesOpen(open, p)}} ${num(v)}\n`;
    }
    return text;
  }];
}

function thresholdLines(name: string, read: (p: PerfSeries) => ThresholdRange | undefined): [string, Writer] {
  return [name, (c, open) => {
    if (c.perf === null) return '';
    let text = '';
    for (const p of c.perf.series) {
      const r = read(p);
      if (r === undefined) continue;
      const at = `${name}${seriesOpen(open, p)},alert="${r.alertInside ? 'inside' : 'outside'}",bound=`;
      if (Number.isFinite(r.start)) text += `${at}"low"} ${num(r.start)}\n`;
      if (Number.isFinite(r.end)) text += `${at}"high"} ${num(r.end)}\n`;
    }
    return text;
  }];
}

const writers = new Map<string, Writer>([
  ['noshell_check_interval_seconds', (c, open) => `noshell_check_interval_seconds${open}} ${num(c.status.definition.interval / 1000)}\n`],
  ['noshell_check_running', (c, open) => `noshell_check_running${open}} ${c.status.running ? 1 : 0}\n`],
  lastLine('noshell_check_state', (c) => c.status.last!.state),
  lastLine('noshell_check_state_type', (c) => (c.status.last!.stateType === 'HARD' ? 1 : 0)),
  lastLine('noshell_check_attempt', (c) => c.status.last!.attempt),
  lastLine('noshell_check_max_attempts', (c) => c.status.last!.maxAttempts),
  lastLine('noshell_check_last_run_timestamp_seconds', (c) => c.status.last!.finishedAt / 1000),
  lastLine('noshell_check_last_state_change_timestamp_seconds', (c) => (c.status.lastStateChangeAt ?? NaN) / 1000),
  lastLine('noshell_check_last_execution_seconds', (c) => c.status.last!.durationMs / 1000),
  lastLine('noshell_check_last_latency_seconds', (c) => c.status.last!.latencyMs / 1000),
  itemLines('noshell_check_perfdata', (p) => p.value),
  thresholdLines('noshell_check_perfdata_warn', (p) => p.warn),
  thresholdLines('noshell_check_perfdata_crit', (p) => p.crit),
  itemLines('noshell_check_perfdata_min', (p) => p.min),
  itemLines('noshell_check_perfdata_max', (p) => p.max),
  ['noshell_check_perfdata_label_sets', (c, open) => (c.perf === null ? '' : `noshell_check_perfdata_label_sets${open}} ${num(c.perf.labelSets)}\n`)],
  ['noshell_check_perfdata_dropped_total', (c, open) => {
    if (c.perf === null) return '';
    const at = `noshell_check_perfdata_dropped_total${open},reason=`;
    const d = c.perf.dropped;
    return `${at}"limit"} ${num(d.limit)}\n${at}"duplicate"} ${num(d.duplicate)}\n${at}"too_long"} ${num(d.tooLong)}\n`;
  }],
]);

/** Names of `families` this has no writer for (rendered the generic way). */
export function genericFamilies(families: readonly MetricFamily[]): string[] {
  return families.filter((f) => !writers.has(f.name)).map((f) => f.name);
}

/** Renders one exposed check's lines for each of `families` (all per-check), in order. */
export function checkLinesRenderer(families: readonly MetricFamily[]): (c: CheckSnapshot, snap: Snapshot) => string[] {
  const own = families.map((f) => writers.get(f.name));
  return (c, snap) => {
    const open = `{check="${escapeLabelValue(c.status.id)}"`;
    let one: Snapshot | null = null;
    const out: string[] = [];
    for (let k = 0; k < families.length; k++) {
      const w = own[k];
      out.push(w !== undefined ? flatten(w(c, open)) : sampleLines(families[k], (one ??= { ...snap, checks: [c] })));
    }
    return out;
  };
}
