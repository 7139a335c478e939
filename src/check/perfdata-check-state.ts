// What a check's perfdata caps hold (perfdata-limit.ts): its label sets,
// what was left out, and the items of its last result as read.
import type { Keys } from './perfdata-keys';
import type { RunFigures } from './last-run';
import type { PerfDatum } from './perfdata';

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
  /** The writes count when the result was admitted by a warm pass (-1: it was not, or a scrape has shown it since). */
  pendingAt = -1;
  /** Label sets that admission added (the last ones in keys). */
  pendingKeys = 0;
  /** What it left out (null: nothing). */
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
