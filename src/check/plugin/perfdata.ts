// Performance data: 'label'=value[UOM];[warn];[crit];[min];[max], space
// separated. Labels with spaces are single-quoted, '' is a literal quote.
// A bad item is skipped and reported; it never throws out the rest.
//
// Items are separated by ASCII blanks only (space, tab, CR, LF), as Nagios
// splits them. U+2028, U+2029, no-break space and other Unicode whitespace are
// ordinary characters: part of a label, or of the unit after a value (kept as
// given, like any unknown unit); they make min/max not numbers, and warn/crit
// go to readRange (as parseRange), which trims them as String.prototype.trim
// does. Parsing is one forward pass, without exceptions (issue 8: a
// backtracking value pattern made `a=<65,000 digits>\u2028` take seconds).
import { quoteText } from '../../util/quote-text';
import { checkString } from '../../util/validate';
import { numberValue, parseNumber, scanNumber } from './number';
import { sharedRange, type ThresholdRange } from './range';

export interface PerfDatum {
  label: string;
  /** null for 'U' (undetermined). */
  value: number | null;
  /** '', 's', 'ms', 'us', '%', 'B', 'KB', 'MB', 'TB', 'c', or whatever the plugin used. */
  uom: string;
  /**
   * Read-only: items whose threshold text is the same and short (≤ 12
   * characters) share one frozen object (a write throws in strict code and
   * is ignored in sloppy code). Scale a copy.
   */
  warn?: Readonly<ThresholdRange>;
  crit?: Readonly<ThresholdRange>;
  min?: number;
  max?: number;
}

export interface PerfdataParse {
  perfdata: PerfDatum[];
  /** One message per skipped item or ignored field. */
  errors: string[];
}

// Space, tab, LF, CR: the only item separators.
function isBlank(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** Parses perfdata, collecting what had to be skipped. */
export function parsePerfdataDetailed(text: string, out: PerfdataParse = { perfdata: [], errors: [] }): PerfdataParse {
  if (typeof text !== 'string') checkString(text, 'parsePerfdata: text');
  const n = text.length;
  let i = 0;
  while (i < n) {
    while (i < n && isBlank(text.charCodeAt(i))) i++;
    if (i >= n) break;
    const itemStart = i;
    let label = '';
    if (text.charCodeAt(i) === 39 /* ' */) {
      i++;
      for (;;) {
        const q = text.indexOf("'", i);
        if (q < 0) {
          label += text.slice(i);
          i = n;
          break;
        }
        label += text.slice(i, q);
        if (text.charCodeAt(q + 1) === 39) {
          label += "'";
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
    }
    // Unquoted label (or garbage after a quoted one) up to '=' or a blank.
    let j = i;
    while (j < n) {
      const c = text.charCodeAt(j);
      if (c === 61 /* = */ || isBlank(c)) break;
      j++;
    }
    label += text.slice(i, j);
    if (j === n || text.charCodeAt(j) !== 61 || label === '') {
      while (j < n && !isBlank(text.charCodeAt(j))) j++;
      out.errors.push(`skipped ${quoteText(text.slice(itemStart, j))}: expected 'label'=value`);
      i = j;
      continue;
    }
    let k = j + 1;
    while (k < n && !isBlank(text.charCodeAt(k))) k++;
    // value;warn;crit;min;max — anything past max is ignored, and not even split.
    const fields = text.slice(j + 1, k).split(';', 5);
    i = k;
    const datum = parseFields(label, fields, out.errors);
    if (datum !== null) out.perfdata.push(datum);
  }
  return out;
}

function parseFields(label: string, fields: string[], errors: string[]): PerfDatum | null {
  const raw = fields[0];
  let value: number | null;
  let uom: string;
  if (raw === 'U') {
    value = null;
    uom = '';
  } else {
    // The unit is whatever follows the number, up to the next ';'.
    const end = scanNumber(raw, 0);
    if (end === 0) {
      errors.push(`skipped ${quoteText(label)}: value ${quoteText(raw)} is not a number`);
      return null;
    }
    value = numberValue(raw.slice(0, end));
    uom = raw.slice(end);
  }
  const warn = rangeField(label, fields[1], 'warn', errors);
  const crit = rangeField(label, fields[2], 'crit', errors);
  const min = numberField(label, fields[3], 'min', errors);
  const max = numberField(label, fields[4], 'max', errors);
  return datumOf(label, value, uom, warn, crit, min, max);
}

function rangeField(label: string, text: string | undefined, name: 'warn' | 'crit', errors: string[]): Readonly<ThresholdRange> | undefined {
  if (text === undefined || text === '') return undefined;
  const r = sharedRange(text);
  if (r === null) errors.push(`${quoteText(label)}: ignored ${name} ${quoteText(text)} (not a range)`);
  return r ?? undefined;
}

function numberField(label: string, text: string | undefined, name: 'min' | 'max', errors: string[]): number | undefined {
  if (text === undefined || text === '') return undefined;
  const v = parseNumber(text);
  if (v === null) errors.push(`${quoteText(label)}: ignored ${name} ${quoteText(text)} (not a number)`);
  return v ?? undefined;
}

/**
 * The datum with only the fields it has, in the order label, value, uom,
 * warn, crit, min, max. The usual sets are made whole by one literal each: a
 * datum made with three fields and given its thresholds after had its
 * further fields in a separate store, an object more per item kept with
 * every result (issue 19).
 */
function datumOf(
  label: string, value: number | null, uom: string,
  warn: Readonly<ThresholdRange> | undefined, crit: Readonly<ThresholdRange> | undefined, min: number | undefined, max: number | undefined,
): PerfDatum {
  const thresholds = warn !== undefined && crit !== undefined;
  if (min === undefined && max === undefined) {
    if (thresholds) return { label, value, uom, warn, crit };
    if (warn === undefined && crit === undefined) return { label, value, uom };
  } else if (thresholds && min !== undefined) {
    return max === undefined ? { label, value, uom, warn, crit, min } : { label, value, uom, warn, crit, min, max };
  } else if (warn === undefined && crit === undefined && min !== undefined && max !== undefined) {
    return { label, value, uom, min, max };
  }
  const d: PerfDatum = { label, value, uom };
  if (warn !== undefined) d.warn = warn;
  if (crit !== undefined) d.crit = crit;
  if (min !== undefined) d.min = min;
  if (max !== undefined) d.max = max;
  return d;
}

/** Parses perfdata; bad items are skipped (parsePerfdataDetailed says which). */
export function parsePerfdata(text: string): PerfDatum[] {
  return parsePerfdataDetailed(text).perfdata;
}
