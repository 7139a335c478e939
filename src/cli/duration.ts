// Durations in config files and flags: a number is milliseconds, a string
// may carry a unit ("250ms", "10s", "5m", "1h"); a bare string number is in
// the caller's unit (seconds on the command line).
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDuration(value: unknown, what: string, bareUnit: 'ms' | 's' = 'ms'): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  if (typeof value === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
    if (m) return Number(m[1]) * UNITS[m[2] ?? bareUnit];
  }
  throw new TypeError(`${what}: expected a duration like 500, "250ms", "10s" or "5m", got ${JSON.stringify(value)}`);
}
