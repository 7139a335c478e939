// Bounds the perfdata series of each check. A plugin that puts a timestamp or
// a pid in its labels would otherwise make a new series every run, without
// bound, here and in Prometheus. Each check may hold `limit` label sets
// (label + unit); later new ones are left out and counted, and a check's sets
// are forgotten only when the check is removed (or replaced). The work is done
// at scrape time, once per result, never on the runner's result path.
// A label or unit longer than `maxLabelBytes` is left out too: without it
// each of the `limit` sets kept could be as long as the output (64 KiB).
import type { CheckStatus } from './check-status';
import { baseUnit, scale } from './perfdata-units';
import type { ThresholdRange } from './range';

export const DEFAULT_PERFDATA_LIMIT = 100;
/** Longest perfdata label (and unit) exported, in UTF-8 bytes. */
export const DEFAULT_PERFDATA_LABEL_MAX_BYTES = 256;

/** Whether `s` has more than `max` UTF-8 bytes (never fewer bytes than UTF-16 units). */
function longerThan(s: string, max: number): boolean {
  return s.length > max || (s.length * 3 > max && Buffer.byteLength(s, 'utf8') > max);
}

/** One perfdata item of a check's last result, in base units. */
export interface PerfSeries {
  label: string;
  uom: string;
  /** { check, label, uom }: made once per result, so scrapes reuse it. */
  labels: Readonly<Record<'check' | 'label' | 'uom', string>>;
  /** NaN for 'U'. */
  value: number;
  warn?: ThresholdRange;
  crit?: ThresholdRange;
  min?: number;
  max?: number;
}

export interface PerfdataDropped {
  /** Items left out because the check already held `limit` label sets. */
  limit: number;
  /** Items whose label and unit an earlier item of the same output had. */
  duplicate: number;
  /** Items whose label or unit was longer than `maxLabelBytes`. */
  tooLong: number;
}

interface CheckState {
  definition: object;
  keys: Set<string>;
  result: object | null;
  series: PerfSeries[];
  dropped: PerfdataDropped;
}

function scaleRange(r: ThresholdRange, factor: number): ThresholdRange {
  return { start: scale(r.start, factor), end: scale(r.end, factor), alertInside: r.alertInside };
}

export class PerfdataLimit {
  readonly #checks = new Map<string, CheckState>();

  constructor(public limit = DEFAULT_PERFDATA_LIMIT, public maxLabelBytes = DEFAULT_PERFDATA_LABEL_MAX_BYTES) {}

  /** The check's exposed series and what was left out so far. */
  read(status: CheckStatus): { series: readonly PerfSeries[]; labelSets: number; dropped: Readonly<PerfdataDropped> } {
    let st = this.#checks.get(status.id);
    if (st === undefined || st.definition !== status.definition) {
      st = { definition: status.definition, keys: new Set(), result: null, series: [], dropped: { limit: 0, duplicate: 0, tooLong: 0 } };
      this.#checks.set(status.id, st);
    }
    if (status.last !== null && st.result !== status.last) this.#admit(st, status.id, status.last.perfdata);
    st.result = status.last;
    return { series: st.series, labelSets: st.keys.size, dropped: st.dropped };
  }

  /** UTF-16 units of the label sets held, over all checks: what the caps bound (limit × 2 × maxLabelBytes per check, and some). */
  heldLabelChars(): number {
    let n = 0;
    for (const st of this.#checks.values()) for (const k of st.keys) n += k.length;
    return n;
  }

  /** Forgets every check whose id is not in `ids`. */
  retain(ids: { has(id: string): boolean }): void {
    for (const id of this.#checks.keys()) if (!ids.has(id)) this.#checks.delete(id);
  }

  #admit(st: CheckState, check: string, perfdata: NonNullable<CheckStatus['last']>['perfdata']): void {
    const seen = new Set<string>();
    st.series = [];
    for (const p of perfdata) {
      if (longerThan(p.label, this.maxLabelBytes) || longerThan(p.uom, this.maxLabelBytes)) {
        st.dropped.tooLong++;
        continue;
      }
      const { uom, factor } = baseUnit(p.uom);
      const key = JSON.stringify([p.label, uom]);
      if (seen.has(key)) {
        st.dropped.duplicate++;
        continue;
      }
      seen.add(key);
      if (!st.keys.has(key)) {
        if (st.keys.size >= this.limit) {
          st.dropped.limit++;
          continue;
        }
        st.keys.add(key);
      }
      const s: PerfSeries = {
        label: p.label, uom, labels: { check, label: p.label, uom }, value: p.value === null ? NaN : scale(p.value, factor),
      };
      if (p.warn !== undefined) s.warn = scaleRange(p.warn, factor);
      if (p.crit !== undefined) s.crit = scaleRange(p.crit, factor);
      if (p.min !== undefined) s.min = scale(p.min, factor);
      if (p.max !== undefined) s.max = scale(p.max, factor);
      st.series.push(s);
    }
  }
}

const limits = new WeakMap<object, PerfdataLimit>();

/** The one PerfdataLimit of a runner, shared by every renderer of its metrics; `limit` and `maxLabelBytes` reset the caps. */
export function perfdataLimitOf(runner: object, limit?: number, maxLabelBytes?: number): PerfdataLimit {
  let l = limits.get(runner);
  if (l === undefined) limits.set(runner, (l = new PerfdataLimit(limit, maxLabelBytes)));
  else {
    if (limit !== undefined) l.limit = limit;
    if (maxLabelBytes !== undefined) l.maxLabelBytes = maxLabelBytes;
  }
  return l;
}
