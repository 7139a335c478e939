// A perfdata item as the series it is exposed as: value, thresholds and
// bounds in the base unit of its unit of measure (perfdata-units.ts).
import type { PerfDatum } from '../../check/plugin/perfdata';
import { baseUnit, scale } from './perfdata-units';
import type { ThresholdRange } from '../../check/plugin/range';

/** One perfdata item of a check's last result, in base units. */
export interface PerfSeries {
  label: string;
  uom: string;
  /** NaN for 'U'. */
  value: number;
  warn?: ThresholdRange;
  crit?: ThresholdRange;
  min?: number;
  max?: number;
}

function scaleRange(r: ThresholdRange, factor: number): ThresholdRange {
  return { start: scale(r.start, factor), end: scale(r.end, factor), alertInside: r.alertInside };
}

/** One perfdata item as its series, in base units (made on each read). */
export function series(p: PerfDatum): PerfSeries {
  const { uom, factor } = baseUnit(p.uom);
  const s: PerfSeries = { label: p.label, uom, value: p.value === null ? NaN : scale(p.value, factor) };
  if (p.warn !== undefined) s.warn = scaleRange(p.warn, factor);
  if (p.crit !== undefined) s.crit = scaleRange(p.crit, factor);
  if (p.min !== undefined) s.min = scale(p.min, factor);
  if (p.max !== undefined) s.max = scale(p.max, factor);
  return s;
}
