// Perfdata of each check's last result: one gauge per item, labelled with
// the check, the perfdata label and the base unit (s, B, %, c, '' or the
// plugin's own), and its thresholds, min and max as series of their own.
// A 'c' item is a counter the plugin keeps: rate() it; it stays a gauge here
// because the plugin, not us, decides when it resets.
import type { CheckSnapshot, MetricFamily, Sample } from './metrics-snapshot';
import type { PerfSeries } from './perfdata-series';
import type { ThresholdRange } from '../../check/plugin/range';

const LABELS = ['check', 'label', 'uom'] as const;

type WithPerf = CheckSnapshot & { perf: NonNullable<CheckSnapshot['perf']> };
/** Checks whose perfdata series are on. */
const withPerf = (checks: readonly CheckSnapshot[]): WithPerf[] => checks.filter((c): c is WithPerf => c.perf !== null);

function itemFamily(name: string, help: string, read: (p: PerfSeries) => number | undefined): MetricFamily {
  return {
    name, help, type: 'gauge', labelNames: LABELS,
    samples: (snap) => {
      const out: Sample[] = [];
      for (const c of snap.checks) {
        if (c.perf === null) continue;
        for (const p of c.perf.series) {
          const value = read(p);
          if (value !== undefined) out.push({ labels: { check: c.status.id, label: p.label, uom: p.uom }, value });
        }
      }
      return out;
    },
  };
}

// A range's finite ends: `10` gives low 0 and high 10, `10:` only low,
// `~:10` only high; alert="inside" marks an '@' range.
function thresholdFamily(name: string, help: string, read: (p: PerfSeries) => ThresholdRange | undefined): MetricFamily {
  // Made per render: /metrics scrapes write their lines without these (check-view.ts, native/metrics/scrape-lines.c).
  const labelsOf = (check: string, p: PerfSeries, r: ThresholdRange, bound: 'low' | 'high'): Sample['labels'] => (
    { check, label: p.label, uom: p.uom, alert: r.alertInside ? 'inside' : 'outside', bound }
  );
  return {
    name, help, type: 'gauge', labelNames: [...LABELS, 'bound', 'alert'],
    samples: (snap) => {
      const out: Sample[] = [];
      for (const c of snap.checks) {
        if (c.perf === null) continue;
        for (const p of c.perf.series) {
          const r = read(p);
          if (r === undefined) continue;
          if (Number.isFinite(r.start)) out.push({ labels: labelsOf(c.status.id, p, r, 'low'), value: r.start });
          if (Number.isFinite(r.end)) out.push({ labels: labelsOf(c.status.id, p, r, 'high'), value: r.end });
        }
      }
      return out;
    },
  };
}

export const perfdataFamilies: readonly MetricFamily[] = [
  itemFamily('noshell_check_perfdata', 'Perfdata value of the last result in base units (ms, us to s; KB, MB, GB, TB to B, 1024-based); NaN for U.',
    (p) => p.value),
  thresholdFamily('noshell_check_perfdata_warn', 'Warning range ends of a perfdata item.', (p) => p.warn),
  thresholdFamily('noshell_check_perfdata_crit', 'Critical range ends of a perfdata item.', (p) => p.crit),
  itemFamily('noshell_check_perfdata_min', 'Minimum a perfdata item can take.', (p) => p.min),
  itemFamily('noshell_check_perfdata_max', 'Maximum a perfdata item can take.', (p) => p.max),
  {
    name: 'noshell_check_perfdata_label_sets', help: 'Perfdata label sets (label and unit) the check holds; at most the limit.',
    type: 'gauge', labelNames: ['check'],
    samples: (s) => withPerf(s.checks).map((c) => ({ labels: { check: c.status.id }, value: c.perf.labelSets })),
  },
  {
    name: 'noshell_check_perfdata_label_sets_limit', help: 'Perfdata label sets a check may hold; new ones past it are dropped.',
    type: 'gauge', labelNames: [], samples: (s) => [{ labels: {}, value: s.perfdataLimit }],
  },
  {
    name: 'noshell_check_perfdata_dropped_total',
    help: 'Perfdata items of scraped results left out: reason="limit" (the check held the limit of label sets), "duplicate" (label and unit repeated in one output), "too_long" (label or unit over the byte limit).',
    type: 'counter', labelNames: ['check', 'reason'],
    samples: (s) => withPerf(s.checks).flatMap((c) => [
      { labels: { check: c.status.id, reason: 'limit' }, value: c.perf.dropped.limit },
      { labels: { check: c.status.id, reason: 'duplicate' }, value: c.perf.dropped.duplicate },
      { labels: { check: c.status.id, reason: 'too_long' }, value: c.perf.dropped.tooLong },
    ]),
  },
];
