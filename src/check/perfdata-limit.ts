// Bounds the perfdata series of each check. A plugin that puts a timestamp or
// a pid in its labels would otherwise make a new series every run, without
// bound, here and in Prometheus. Each check may hold `limit` label sets
// (label + unit); later new ones are left out and counted, and a check's sets
// are forgotten only when the check is removed (or replaced). The work is done
// at scrape time, once per result, never on the runner's result path.
// A label or unit longer than `maxLabelBytes` is left out too: without it
// each of the `limit` sets kept could be as long as the output (64 KiB).
import type { CheckFigures } from './check-status';
import type { RunFigures } from './last-run';
import type { PerfDatum } from './perfdata';
import { baseUnit, baseUom, scale } from './perfdata-units';
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

/**
 * A check's label sets while it holds at most 16: one string of
 * `<key length>;<key>` tokens, searched from the start (a KeySet of a grown
 * array, with each key a string of its own, was ~350 B per check with five
 * sets: 35 MB at 100,000 checks); a Set beyond that.
 */
type Keys = string | Set<string>;

const FEW = 16;

/** The length of the key whose token starts at `i`, set by keyAt(). */
let keyLength = 0;

/** Where the key of the token at `i` starts (-1: none); its length goes to keyLength. */
function keyAt(keys: string, i: number): number {
  // The digits hold no ';': the first one from i ends them.
  const semi = keys.indexOf(';', i);
  if (semi < 0) return -1;
  let len = 0;
  for (let j = i; j < semi; j++) len = len * 10 + keys.charCodeAt(j) - 48;
  keyLength = len;
  return semi + 1;
}

function keysHas(keys: Keys, key: string): boolean {
  if (typeof keys !== 'string') return keys.has(key);
  for (let i = keyAt(keys, 0); i >= 0; i = keyAt(keys, i + keyLength)) {
    if (keyLength === key.length && keys.startsWith(key, i)) return true;
  }
  return false;
}

function* keysOf(keys: Keys): Generator<string> {
  if (typeof keys !== 'string') {
    yield* keys;
    return;
  }
  for (let i = keyAt(keys, 0); i >= 0;) {
    // Read before the yield: whoever iterates may call keyAt() meanwhile.
    const end = i + keyLength;
    yield keys.slice(i, end);
    i = keyAt(keys, end);
  }
}

/** Keys with `key` added; `held`: how many it has. */
function keysAdd(keys: Keys, held: number, key: string): Keys {
  if (typeof keys !== 'string') return keys.add(key);
  // Joined, not concatenated: `+` makes a rope of the string, three more objects per check.
  if (held < FEW) return [keys, key.length, ';', key].join('');
  return new Set(keysOf(keys)).add(key);
}

const NO_DROPS: Readonly<PerfdataDropped> = Object.freeze({ limit: 0, duplicate: 0, tooLong: 0 });

/**
 * What a check holds: its label sets, what was left out, and the items of
 * its last result as read (one object per result, given to every read of
 * it: a scrape's views hold them until it ends, and a new object per read
 * was promoted with them on every scrape).
 */
class CheckState {
  keys: Keys = '';
  labelSets = 0;
  result: RunFigures | null = null;
  items: PerfItems = NO_ITEMS;
  /** null until something is left out. */
  dropped: PerfdataDropped | null = null;
  /** PerfdataLimit's mark when last read. */
  seen = 0;
  constructor(readonly definition: object) {}
}

/**
 * Whether `b` is the result `a` is: the same object, or a copy of it
 * (CheckRunner.checkStatus() makes each `last` anew from its record, with
 * the record's perfdata array and times). A result counts its drops once.
 */
function sameResult(a: RunFigures | null, b: RunFigures): boolean {
  return a === b || (a !== null && a.perfdata === b.perfdata && a.finishedAt === b.finishedAt);
}

/** A check's exposed perfdata items (the result's own) and its caps' figures. */
export interface PerfItems {
  items: readonly PerfDatum[];
  labelSets: number;
  dropped: Readonly<PerfdataDropped>;
}

const NO_DATA: readonly PerfDatum[] = Object.freeze([]);
/** What readItems() gives for a check that has no result yet (shared: nothing of it is kept). */
const NO_ITEMS: PerfItems = Object.freeze({ items: NO_DATA, labelSets: 0, dropped: Object.freeze({ limit: 0, duplicate: 0, tooLong: 0 }) });

function scaleRange(r: ThresholdRange, factor: number): ThresholdRange {
  return { start: scale(r.start, factor), end: scale(r.end, factor), alertInside: r.alertInside };
}

type Perfdata = readonly PerfDatum[];

/**
 * Each check's caps: the label sets it holds and what was left out. The
 * series themselves are made from the result whenever they are read, not
 * kept: holding them (with their label objects and scaled ranges) cost
 * ~600 B per check.
 */
export class PerfdataLimit {
  readonly #checks = new Map<string, CheckState>();
  #mark = 0;

  constructor(public limit = DEFAULT_PERFDATA_LIMIT, public maxLabelBytes = DEFAULT_PERFDATA_LABEL_MAX_BYTES) {}

  /** The check's exposed series and what was left out so far. */
  read(status: CheckFigures): { series: readonly PerfSeries[]; labelSets: number; dropped: Readonly<PerfdataDropped> } {
    const v = this.readItems(status);
    return { series: v.items.map(series), labelSets: v.labelSets, dropped: v.dropped };
  }

  /**
   * read() before the series are made: the result's exposed items as the
   * plugin gave them (the result's own objects; a new array only when some
   * are left out). A scrape renders its text from these, each family in a
   * pass of its own, and makes nothing per item.
   */
  readItems(status: CheckFigures): PerfItems {
    let st = this.#checks.get(status.id);
    if (st === undefined || st.definition !== status.definition) {
      if (status.last === null) {
        // Nothing to hold yet; a replaced definition starts over.
        if (st !== undefined) this.#checks.delete(status.id);
        return NO_ITEMS;
      }
      st = new CheckState(status.definition);
      this.#checks.set(status.id, st);
    }
    st.seen = this.#mark;
    if (status.last === null) {
      // Let go of the last result's items too (outside review: a source whose result went back to null kept them).
      st.result = null;
      st.items = NO_ITEMS;
      return { items: NO_DATA, labelSets: st.labelSets, dropped: st.dropped ?? NO_DROPS };
    }
    if (!sameResult(st.result, status.last)) {
      const perfdata = status.last.perfdata;
      const kept = this.#admit(st, perfdata);
      // Only once admitted: a throw part way leaves the result to be admitted again, not the last one's items as its own.
      st.result = status.last;
      st.items = { items: kept === null ? perfdata : kept.map((i) => perfdata[i]), labelSets: st.labelSets, dropped: st.dropped ?? NO_DROPS };
    }
    return st.items;
  }

  /** UTF-16 units of the label sets held, over all checks: what the caps bound (limit × 2 × maxLabelBytes per check, and some). */
  heldLabelChars(): number {
    let n = 0;
    for (const st of this.#checks.values()) for (const k of keysOf(st.keys)) n += k.length;
    return n;
  }

  /** Forgets every check whose id is not in `ids` (and, given a mark(), not read since). */
  retain(ids: { has(id: string): boolean }, since = Infinity): void {
    for (const step = this.retainSteps(ids, since); !step.next().done;);
  }

  /**
   * A new mark: a retain that passes it keeps every check read from now on,
   * whatever its ids say. A sliced scrape takes one before its list of
   * checks, and retains against that list some turns later: a check added
   * meanwhile and read by another renderer kept its caps (they were wiped,
   * its dropped counter went back: outside review).
   */
  mark(): number {
    return ++this.#mark;
  }

  /** retain() a thousand checks a step (Map iteration goes on correctly past deletions); `since`: a mark() (default: none kept). */
  *retainSteps(ids: { has(id: string): boolean }, since = Infinity): Generator<void, void, undefined> {
    let n = 0;
    // Keys, not entries: an entry is a new [id, state] array (2 MB a scrape of 20,000 checks).
    for (const id of this.#checks.keys()) {
      if (!ids.has(id) && this.#checks.get(id)!.seen < since) this.#checks.delete(id);
      if ((++n & 1023) === 0) yield;
    }
  }

  /**
   * Admits a result not seen before: its new label sets are taken while the
   * check holds fewer than `limit`, and its items left out are counted.
   * Gives which items it exposes, by index (null: all), which later reads of
   * the same result expose again, whatever the caps are by then (a cap
   * changed after a result applies from the next result on).
   */
  #admit(st: CheckState, perfdata: Perfdata): number[] | null {
    const seen = perfdata.length > FEW ? new Set<string>() : null;
    resultKeys.length = 0;
    const kept: number[] = [];
    for (let i = 0; i < perfdata.length; i++) {
      const p = perfdata[i];
      if (longerThan(p.label, this.maxLabelBytes) || longerThan(p.uom, this.maxLabelBytes)) {
        (st.dropped ??= { limit: 0, duplicate: 0, tooLong: 0 }).tooLong++;
        continue;
      }
      const key = labelKey(p.label, baseUom(p.uom));
      if (seen !== null ? seen.has(key) : resultKeys.includes(key)) {
        (st.dropped ??= { limit: 0, duplicate: 0, tooLong: 0 }).duplicate++;
        continue;
      }
      if (seen !== null) seen.add(key);
      else resultKeys.push(key);
      if (!keysHas(st.keys, key)) {
        if (st.labelSets >= this.limit) {
          (st.dropped ??= { limit: 0, duplicate: 0, tooLong: 0 }).limit++;
          continue;
        }
        st.keys = keysAdd(st.keys, st.labelSets, key);
        st.labelSets++;
      }
      kept.push(i);
    }
    resultKeys.length = 0;
    return kept.length === perfdata.length ? null : kept;
  }
}

/** The keys of the result being admitted so far (results of up to FEW items: no Set per result). */
const resultKeys: string[] = [];

/**
 * A label set's key: the label's length first, so that no two sets share one
 * (JSON.stringify of the pair cost ~0.4 µs an item, and escapes made keys of
 * odd labels up to six times their length).
 */
function labelKey(label: string, uom: string): string {
  return `${label.length}:${label}${uom}`;
}

/** One perfdata item as its series, in base units (made on each read). */
function series(p: PerfDatum): PerfSeries {
  const { uom, factor } = baseUnit(p.uom);
  const s: PerfSeries = { label: p.label, uom, value: p.value === null ? NaN : scale(p.value, factor) };
  if (p.warn !== undefined) s.warn = scaleRange(p.warn, factor);
  if (p.crit !== undefined) s.crit = scaleRange(p.crit, factor);
  if (p.min !== undefined) s.min = scale(p.min, factor);
  if (p.max !== undefined) s.max = scale(p.max, factor);
  return s;
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
