// What a check's perfdata caps hold (perfdata-limit.ts): its label sets,
// what was left out, and the items of its last result as read.
import { keysDropLast, type Keys } from './perfdata-keys';
import type { RunFigures } from '../../check/model/last-run';
import type { PerfDatum } from '../../check/plugin/perfdata';

export interface PerfdataDropped {
  /** Items left out because the check already held `limit` label sets. */
  limit: number;
  /** Items whose label and unit an earlier item of the same output had. */
  duplicate: number;
  /** Items whose label or unit was longer than `maxLabelBytes`. */
  tooLong: number;
}

export const NO_DROPS: Readonly<PerfdataDropped> = Object.freeze({ limit: 0, duplicate: 0, tooLong: 0 });

/**
 * What a check holds: its label sets, what was left out, and the items of
 * its last result as read (one object per result, given to every read of
 * it: a scrape's views hold them until it ends, and a new object per read
 * was promoted with them on every scrape).
 */
export class CheckState {
  keys: Keys = '';
  labelSets = 0;
  result: RunFigures | null = null;
  items: PerfItems = NO_ITEMS;
  /** null until something is left out. */
  dropped: PerfdataDropped | null = null;
  /** PerfdataLimit's mark when last read. */
  seen = 0;
  /** The number of the warm pass's admission of the result (-1: it was not admitted by one, or a scrape has shown it since). */
  pendingAt = -1;
  /** Label sets that admission added (the last ones in keys). */
  pendingKeys = 0;
  /** What `dropped` was before it, if it left anything out (NO_DROPS: it was null). */
  pendingDrops: PerfdataDropped | null = null;
  constructor(readonly definition: object) {}
}

/**
 * Whether `b` is the result `a` is: the same object, or a copy of it
 * (CheckRunner.checkStatus() makes each `last` anew from its record, with
 * the record's perfdata array and times). A result counts its drops once.
 */
export function sameResult(a: RunFigures | null, b: RunFigures): boolean {
  return a === b || (a !== null && a.perfdata === b.perfdata && a.finishedAt === b.finishedAt);
}

/** A check's exposed perfdata items (the result's own) and its caps' figures. */
export interface PerfItems {
  items: readonly PerfDatum[];
  labelSets: number;
  dropped: Readonly<PerfdataDropped>;
}

export const NO_DATA: readonly PerfDatum[] = Object.freeze([]);
/** What readItems() gives for a check that has no result yet (shared: nothing of it is kept). */
export const NO_ITEMS: PerfItems = Object.freeze({ items: NO_DATA, labelSets: 0, dropped: Object.freeze({ limit: 0, duplicate: 0, tooLong: 0 }) });

/**
 * Before a warm pass admits a result: what the check holds now is noted.
 * The drop counts go on in a copy (`dropped` may be held by a reader that
 * has not written it yet: counts taken back from it went down there,
 * outside review).
 */
export function startPending(st: CheckState): void {
  const before = st.dropped;
  st.pendingKeys = st.labelSets;
  st.pendingDrops = before ?? NO_DROPS;
  if (before !== null) st.dropped = { limit: before.limit, duplicate: before.duplicate, tooLong: before.tooLong };
}

/** After it: what it added, to be taken back (takeBack()) unless a scrape shows the result; `n`: its number. */
export function endPending(st: CheckState, n: number): void {
  st.pendingAt = n;
  st.pendingKeys = st.labelSets - st.pendingKeys;
  const before = st.pendingDrops === NO_DROPS ? null : st.pendingDrops;
  const now = st.dropped;
  if (now === null || (before !== null && now.limit === before.limit && now.duplicate === before.duplicate && now.tooLong === before.tooLong)) {
    // Nothing left out: the object as it was stays.
    st.dropped = before;
    st.pendingDrops = null;
  }
}

/** The result's admission by a pass stays: a scrape showed it. */
export function keepPending(st: CheckState): void {
  st.pendingAt = -1;
  st.pendingKeys = 0;
  st.pendingDrops = null;
}

/** The result's admission by a pass is undone: no scrape showed it. */
export function takeBack(st: CheckState): void {
  st.keys = keysDropLast(st.keys, st.labelSets, st.pendingKeys);
  st.labelSets -= st.pendingKeys;
  if (st.pendingDrops !== null) st.dropped = st.pendingDrops === NO_DROPS ? null : st.pendingDrops;
  keepPending(st);
}
