// Axis scales for the bench charts: a linear one with 1-2-5 steps, and a log
// one for rates that span decades (cp.exec with 1 GiB held runs ~20/s, the C
// loop ~2,000/s: on a linear axis the slow series lie flat on zero).

export interface Scale {
  kind: 'linear' | 'log';
  /** The axis' ends (ticks included). */
  min: number;
  max: number;
  ticks: number[];
  /** 0 at min, 1 at max. */
  fraction(v: number): number;
}

/** Values spanning more than this ratio (1.5 decades) get a log axis. */
export const LOG_SPAN = 10 ** 1.5;

function niceStep(range: number, count: number): number {
  const raw = range / count;
  const pow = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5]) if (m * pow >= raw) return m * pow;
  return 10 * pow;
}

/** From 0 (or below, for negative data) to a tick at least 5 % above the data. */
export function linearScale(lo: number, hi: number, count = 5): Scale {
  const min0 = Math.min(0, lo);
  const max0 = hi > min0 ? hi + 0.05 * (hi - min0) : min0 + 1;
  const step = niceStep(max0 - min0, count);
  const min = Math.floor(min0 / step) * step;
  const max = Math.ceil(max0 / step) * step;
  const ticks: number[] = [];
  // Integer steps: no drift from adding 0.1 five times.
  for (let i = 0; min + i * step <= max + step / 1e6; i++) ticks.push(Number((min + i * step).toPrecision(12)));
  return { kind: 'linear', min, max, ticks, fraction: (v) => (v - min) / (max - min) };
}

/**
 * Ticks at 1, 2 and 5 × 10^k (only the powers of ten beyond four decades).
 * The axis reaches 5 % of its span past the data at each end, so no marker
 * sits on the frame.
 */
export function logScale(lo: number, hi: number): Scale {
  if (!(lo > 0)) throw new RangeError(`a log axis needs positive values, got ${lo}`);
  const pad = 0.05 * (Math.log10(hi / lo) || 1);
  const l0 = Math.log10(lo) - pad;
  const l1 = Math.log10(hi) + pad;
  const mantissas = l1 - l0 > 4 ? [1] : [1, 2, 5];
  const ticks: number[] = [];
  for (let e = Math.floor(l0); e <= Math.ceil(l1); e++) {
    for (const m of mantissas) {
      const t = Number((m * 10 ** e).toPrecision(12));
      if (Math.log10(t) >= l0 && Math.log10(t) <= l1) ticks.push(t);
    }
  }
  return { kind: 'log', min: 10 ** l0, max: 10 ** l1, ticks, fraction: (v) => (Math.log10(v) - l0) / (l1 - l0) };
}

/** Log when every value is positive and they span more than LOG_SPAN. */
export function autoScale(values: number[]): Scale {
  const finite = values.filter((v) => Number.isFinite(v));
  const lo = Math.min(...finite);
  const hi = Math.max(...finite);
  if (finite.length === 0) return linearScale(0, 1);
  return lo > 0 && hi / lo > LOG_SPAN ? logScale(lo, hi) : linearScale(lo, hi);
}

/** 1234 → "1,234"; 0.5 → "0.5". */
export function tickLabel(v: number): string {
  return Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : String(Number(v.toPrecision(6)));
}
