// The check rates of `noshell bench --scale` (issue 19): what its main phase
// and its fill offer, from the machine's measured capacity unless given. Half
// the capacity leaves a core's worth of time to noshell's own event loop,
// whose scrapes, latencies and reloads the bench is about; at saturation it
// would measure the loop waiting for a CPU. The caps keep a fast machine's
// bench as it was before the calibration (300 and 800 checks/s).

export const RATE_CAP = 300;
export const FILL_RATE_CAP = 800;
/** The share of the measured capacity a phase offers by default. */
export const CAPACITY_SHARE = 0.5;

export interface BenchRate {
  /** Checks/s. */
  value: number;
  /** Given on the command line; half the capacity; the cap, which is below half the capacity. */
  from: 'given' | 'capacity' | 'cap';
}

function rateFrom(capacity: number | null, given: number | null, cap: number, name: string): BenchRate {
  if (given !== null) return { value: given, from: 'given' };
  if (capacity === null || !Number.isFinite(capacity)) throw new TypeError(`noshell bench --scale: no ${name} given and no capacity measured`);
  const half = Math.floor(capacity * CAPACITY_SHARE);
  // A rate of 0 would be an interval of forever: a bench that never runs a check.
  if (half < 1) throw new RangeError(`noshell bench --scale: a measured capacity of ${capacity} checks/s leaves no ${name}`);
  return half >= cap ? { value: cap, from: 'cap' } : { value: half, from: 'capacity' };
}

/** The main phase's and the fill's rates; `capacity` (results/s) may be null only when both are given. */
export function benchRates(
  capacity: number | null, given: { rate: number | null; fillRate: number | null },
): { rate: BenchRate; fillRate: BenchRate } {
  return { rate: rateFrom(capacity, given.rate, RATE_CAP, '--rate'), fillRate: rateFrom(capacity, given.fillRate, FILL_RATE_CAP, '--fill-rate') };
}

/** "165 checks/s (half the measured capacity)", "300 checks/s (given; 91 % of the measured capacity)". */
export function describeRate(r: BenchRate, capacity: number | null): string {
  const share = capacity === null ? '' : `; ${Math.round((100 * r.value) / capacity)} % of the measured capacity`;
  const from = r.from === 'given' ? `given${share}`
    : r.from === 'capacity' ? 'half the measured capacity'
    : `the cap, below half the measured capacity${share}`;
  return `${r.value} checks/s (${from})`;
}
