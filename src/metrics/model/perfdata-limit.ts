// Bounds the perfdata series of each check. A plugin that puts a timestamp or
// a pid in its labels would otherwise make a new series every run, without
// bound, here and in Prometheus. Each check may hold `limit` label sets
// (label + unit); later new ones are left out and counted, and a check's sets
// are forgotten only when the check is removed (or replaced). The work is done
// at scrape time, once per result, never on the runner's result path.
// A label or unit longer than `maxLabelBytes` is left out too: without it
// each of the `limit` sets kept could be as long as the output (64 KiB).
// The sets and drops counted are those of results a scrape showed: what a
// warm pass read of a result that was replaced before the next scrape is
// taken back when the next result is read.
import type { CheckFigures } from '../../check/model/check-status';
import type { PerfDatum } from '../../check/plugin/perfdata';
import {
  CheckState, endPending, keepPending, NO_DATA, NO_DROPS, NO_ITEMS, sameResult, startPending, takeBack,
  type PerfdataDropped, type PerfItems } from './perfdata-check-state';
import { FEW, keysAdd, keysHas, keysOf, labelKey } from './perfdata-keys';
import { series, type PerfSeries } from './perfdata-series';
import { baseUom } from './perfdata-units';

export type { PerfdataDropped, PerfItems } from './perfdata-check-state';

export const DEFAULT_PERFDATA_LIMIT = 100;
/** Longest perfdata label (and unit) exported, in UTF-8 bytes. */
export const DEFAULT_PERFDATA_LABEL_MAX_BYTES = 256;

/** Whether `s` has more than `max` UTF-8 bytes (never fewer bytes than UTF-16 units). */
function longerThan(s: string, max: number): boolean {
  return s.length > max || (s.length * 3 > max && Buffer.byteLength(s, 'utf8') > max);
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
  /** Provisional admissions so far (each one's number is its place in that order). */
  #admitted = 0;
  /** Provisional admissions up to this number were shown by a scrape (those after it are taken back). */
  #shown = 0;
  /**
   * Set by a warm pass (scrape-warm.ts) around its reads: what it admits
   * is taken back if the check's next result comes before a scrape that
   * started after it showed it. Without that, a check whose labels change
   * every run (a pid, a timestamp) filled its cap between two scrapes with
   * sets no scrape showed, and its series were never seen (Prometheus,
   * every second).
   */
  provisional = false;

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
    // Read by a renderer that shows it: what a pass admitted stays.
    if (!this.provisional && st.pendingAt >= 0 && status.last !== null && sameResult(st.result, status.last)) keepPending(st);
    if (status.last === null) {
      // Let go of the last result's items too (outside review: a source whose result went back to null kept them).
      this.#settle(st);
      st.result = null;
      st.items = NO_ITEMS;
      return { items: NO_DATA, labelSets: st.labelSets, dropped: st.dropped ?? NO_DROPS };
    }
    if (!sameResult(st.result, status.last)) {
      const perfdata = status.last.perfdata;
      this.#settle(st);
      let kept: number[] | null;
      if (this.provisional) {
        startPending(st);
        kept = this.#admit(st, perfdata);
        endPending(st, ++this.#admitted);
      } else kept = this.#admit(st, perfdata);
      // Only once admitted: a throw part way leaves the result to be admitted again, not the last one's items as its own.
      st.result = status.last;
      st.items = { items: kept === null ? perfdata : kept.map((i) => perfdata[i]), labelSets: st.labelSets, dropped: st.dropped ?? NO_DROPS };
    }
    return st.items;
  }

  /** Where a scrape (not a pass) starts: give it to written() when it has brought every check's result to its text. */
  started(): number {
    return this.#admitted;
  }

  /**
   * A scrape that started at `start` (started()) has read every check: what
   * passes admitted before it started, and is a check's result still, it
   * showed; what they admitted after it started, it did not (a check it had
   * read already: outside review).
   */
  written(start: number): void {
    if (start > this.#shown) this.#shown = start;
  }

  /**
   * The caps or what is exposed changed: what passes admitted that no
   * scrape showed yet is taken back, and the result read again under the
   * new settings when it is next read (as a scrape that had not met it
   * before the change would).
   */
  reconsider(): void {
    for (const st of this.#checks.values()) {
      if (st.pendingAt <= this.#shown) continue;
      takeBack(st);
      st.result = null;
      st.items = NO_ITEMS;
    }
  }

  /** Before a new result is admitted: the last one's provisional admission is taken back if no scrape showed it. */
  #settle(st: CheckState): void {
    if (st.pendingAt < 0) return;
    if (st.pendingAt > this.#shown) takeBack(st);
    else keepPending(st);
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

const limits = new WeakMap<object, PerfdataLimit>();

/** The one PerfdataLimit of a runner, shared by every renderer of its metrics; `limit` and `maxLabelBytes` reset the caps. */
export function perfdataLimitOf(runner: object, limit?: number, maxLabelBytes?: number): PerfdataLimit {
  let l = limits.get(runner);
  if (l === undefined) limits.set(runner, (l = new PerfdataLimit(limit, maxLabelBytes)));
  else if ((limit !== undefined && limit !== l.limit) || (maxLabelBytes !== undefined && maxLabelBytes !== l.maxLabelBytes)) {
    if (limit !== undefined) l.limit = limit;
    if (maxLabelBytes !== undefined) l.maxLabelBytes = maxLabelBytes;
    l.reconsider();
  }
  return l;
}
