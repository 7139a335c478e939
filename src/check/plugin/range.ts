// Nagios threshold ranges (monitoring-plugins guidelines):
//   10      alert outside 0..10        10:     alert below 10
//   ~:10    alert above 10             10:20   alert outside 10..20
//   @10:20  alert inside 10..20 (ends inclusive)
import { quoteText } from '../../util/quote-text';
import { describe } from '../../util/validate';
import { parseNumber } from './number';

export interface ThresholdRange {
  start: number;
  end: number;
  /** '@' prefix: alert when the value is inside start..end. */
  alertInside: boolean;
}

/**
 * The range in `text`, or null when it is not one. No exception: perfdata
 * reads a warn and a crit per item, and a throw (with its stack trace) per
 * bad field made garbage output cost 30x as much as good output to parse.
 */
export function readRange(text: string): ThresholdRange | null {
  let t = text.trim();
  const alertInside = t.startsWith('@');
  if (alertInside) t = t.slice(1);
  let start: number | null;
  let end: number | null;
  const colon = t.indexOf(':');
  if (colon < 0) {
    start = 0;
    end = parseNumber(t);
  } else {
    const a = t.slice(0, colon);
    const b = t.slice(colon + 1);
    start = a === '~' ? -Infinity : a === '' ? 0 : parseNumber(a);
    end = b === '' ? Infinity : parseNumber(b);
  }
  if (start === null || end === null || start > end || t === '') return null;
  return { start, end, alertInside };
}

// Perfdata thresholds repeat: each check gives the same few ranges every
// run, and a result of five items held two to ten range objects, kept until
// the check's next result (issue 19: at 100,000 checks the collector walked
// them all in every marking). Short range texts get one frozen object each.
// Only texts shorter than 13 characters are kept as keys: V8 copies a
// substring that short, where a longer one may be a slice that keeps the
// whole plugin output alive.
const SHARED_KEY_MAX = 12;
const SHARED_MAX = 4096;
const shared = new Map<string, Readonly<ThresholdRange> | null>();

/**
 * readRange(text), the same object for the same short text while it is
 * remembered (up to 4,096 texts, then they are forgotten at once). Frozen:
 * many results hold it.
 */
export function sharedRange(text: string): Readonly<ThresholdRange> | null {
  if (text.length > SHARED_KEY_MAX) return readRange(text);
  let r = shared.get(text);
  if (r === undefined) {
    r = readRange(text);
    if (r !== null) Object.freeze(r);
    if (shared.size >= SHARED_MAX) shared.clear();
    shared.set(text, r);
  }
  return r;
}

/** Parses a range; throws RangeError for text that is not one. */
export function parseRange(text: string): ThresholdRange {
  if (typeof text !== 'string') throw new TypeError(`parseRange: expected a string, got ${describe(text)}`);
  const range = readRange(text);
  if (range === null) throw new RangeError(`not a threshold range: ${quoteText(text)}`);
  return range;
}

/** True when `value` should alert under `range`. */
export function checkRange(value: number, range: ThresholdRange): boolean {
  const inside = value >= range.start && value <= range.end;
  return range.alertInside ? inside : !inside;
}
