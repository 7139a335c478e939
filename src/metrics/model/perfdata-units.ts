// Perfdata units to Prometheus base units: seconds and bytes, as Prometheus
// naming asks. The byte prefixes are powers of 1024, as the Nagios plugins
// mean them (check_disk's MB units are 1024 * 1024 bytes). Units are
// case-sensitive (a lower-case b is bits to network plugins); anything
// unknown is kept with factor 1.

const FACTORS: Readonly<Record<string, readonly [string, number]>> = {
  s: ['s', 1],
  ms: ['s', 1e-3],
  us: ['s', 1e-6],
  '%': ['%', 1],
  B: ['B', 1],
  KB: ['B', 2 ** 10],
  MB: ['B', 2 ** 20],
  GB: ['B', 2 ** 30],
  TB: ['B', 2 ** 40],
  PB: ['B', 2 ** 50],
  KiB: ['B', 2 ** 10],
  MiB: ['B', 2 ** 20],
  GiB: ['B', 2 ** 30],
  TiB: ['B', 2 ** 40],
  PiB: ['B', 2 ** 50],
  c: ['c', 1],
};

export interface BaseUnit {
  /** 's', 'B', '%', 'c', '' or the plugin's own unit. */
  uom: string;
  /** Multiplies a value (and thresholds, min, max) in the plugin's unit into `uom`. */
  factor: number;
}

export function baseUnit(uom: string): BaseUnit {
  const f = Object.hasOwn(FACTORS, uom) ? FACTORS[uom] : undefined;
  return f === undefined ? { uom, factor: 1 } : { uom: f[0], factor: f[1] };
}

/** value * factor, without turning 0.001 ms into 1.0000000000000002e-6 s. */
export function scale(value: number, factor: number): number {
  if (factor === 1 || !Number.isFinite(value)) return value;
  return factor < 1 ? value / Math.round(1 / factor) : value * factor;
}

/** baseUnit(uom).uom, without the object (a scrape asks once per item and family). */
export function baseUom(uom: string): string {
  return Object.hasOwn(FACTORS, uom) ? FACTORS[uom][0] : uom;
}

/** baseUnit(uom).factor, without the object. */
export function unitFactor(uom: string): number {
  return Object.hasOwn(FACTORS, uom) ? FACTORS[uom][1] : 1;
}
