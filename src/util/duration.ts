// Durations in config files and flags: a number is milliseconds, a string
// may carry a unit ("250ms", "10s", "5m", "1h"); a bare string number is in
// the caller's unit (seconds on the command line). Whitespace around the
// number and the unit is allowed (what String.prototype.trim strips).
//
// A scan, not a regex: `\s*(unit)?\s*$` backtracks over a run of blanks, and
// "1" + 20,000 spaces + "x" took 0.33 s (issue 8).
import { quoteText } from './quote-text';

const UNITS = new Map<string, number>([['ms', 1], ['s', 1000], ['m', 60_000], ['h', 3_600_000]]);

function digitsEnd(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) break;
    i++;
  }
  return i;
}

/** `digits[.digits][blanks][unit]` after trimming, in ms; null if the text is not that. */
function parseDurationText(value: string, bareUnit: 'ms' | 's'): number | null {
  const t = value.trim();
  let end = digitsEnd(t, 0);
  if (end === 0) return null;
  if (t.charCodeAt(end) === 46 /* . */) {
    const fracEnd = digitsEnd(t, end + 1);
    if (fracEnd === end + 1) return null;
    end = fracEnd;
  }
  const unit = t.slice(end).trimStart();
  const scale = UNITS.get(unit === '' ? bareUnit : unit);
  return scale === undefined ? null : Number(t.slice(0, end)) * scale;
}

/** A value in a message: a string quoted and cut; NaN, Infinity and 10n as written (JSON has null for the first two, and throws on the last). */
export function gotText(value: unknown): string {
  if (typeof value === 'string') return quoteText(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'symbol') return value.toString();
  return `${value as number | boolean | undefined}`;
}

/** A duration the API takes: milliseconds, or a string with a unit as in checks files ("250ms", "10s", "5m", "1h"). */
export type Duration = number | string;

export function parseDuration(value: unknown, what: string, bareUnit: 'ms' | 's' = 'ms'): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  if (typeof value === 'string') {
    const ms = parseDurationText(value, bareUnit);
    if (ms !== null) return ms;
  }
  const got = gotText(value);
  throw new TypeError(`${what}: expected a duration like 500, "250ms", "10s" or "5m", got ${got}`);
}
