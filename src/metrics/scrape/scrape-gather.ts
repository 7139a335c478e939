// One scrape's reading of a runner's checks into the kept columns
// (scrape-cache.ts says how), or, for any other source, into columns of its
// own.
import type { CheckFigures } from '../../check/model/check-status';
import { CheckViews } from './check-view';
import { checkExposure } from '../model/metrics-options';
import type { RunnerMetricsState } from './metrics-state';
import type { ScrapeCache } from './scrape-cache';
import { ScrapeColumns } from './scrape-columns';
import { Keys } from './scrape-keys';
import { ScrapeCopy, type CurrentDefinition } from './scrape-copy';
import { ScrapeText } from './scrape-text';

/** Pieces and bytes the kept text may gain past twice those of its last full read before a scrape reads every check again. */
const SPARE_PIECES = 65_536;
const SPARE_BYTES = 16 * 1024 * 1024;


export type { CurrentDefinition } from './scrape-copy';

/** One scrape's reading of its checks: add() each status in order, work() until false, then done() (the views to write from), and close() at the end. */
export class ScrapeGather {
  readonly views: CheckViews;
  readonly #state: RunnerMetricsState;
  readonly #cache: ScrapeCache | null;
  readonly #current: CurrentDefinition | null;
  /** Reading into the kept columns in place (null: into columns of this scrape's own, or #copy). */
  #a: ScrapeColumns | null = null;
  #aKeys: Keys | null = null;
  /** The next check of #a expected. */
  #k = 0;
  /** Going on into a second set (null: not, or not a runner). */
  #copy: ScrapeCopy | null = null;
  /** Where a changed check is read before it is written over its old place. */
  #one: ScrapeColumns | null = null;
  #rebuilt = false;
  #exposure: unknown = null;
  #limit = -1;
  #maxLabelBytes = -1;
  #done = false;
  #read = 0;
  readonly #pass: boolean;
  /** The perfdata caps' started() when this gather began (a scrape shows what passes admitted before it). */
  readonly #start: number;

  /**
   * `current`: given for a source of kept records (CheckRunner), whose
   * unchanged checks can then be told by identity; null for any other.
   * `pass`: a warm pass (scrape-warm.ts), which writes nothing of what it reads.
   */
  constructor(state: RunnerMetricsState, current: CurrentDefinition | null, pass = false) {
    this.#pass = pass;
    this.#start = state.limit.started();
    this.#state = state;
    this.#current = current;
    const held = state.cache.owner !== null;
    const cache = current !== null && state.cache.owner?.deref() === undefined ? state.cache : null;
    this.#cache = cache;
    if (cache === null) {
      this.views = new CheckViews(new ScrapeText(), state.limit, state.exposure, state.columns.take());
      return;
    }
    // Held by a scrape that was dropped unfinished: what it left is not trusted.
    if (held) cache.reset();
    cache.owner = new WeakRef(this);
    const v = cache.views;
    if (v !== null && cache.exposure === state.exposure && cache.limit === state.limit.limit &&
      cache.maxLabelBytes === state.limit.maxLabelBytes && v.text.count <= 2 * cache.pieces + SPARE_PIECES &&
      v.text.bytes <= 2 * cache.bytes + SPARE_BYTES) {
      this.views = v;
      this.#a = v.cols;
      this.#aKeys = cache.keys;
      return;
    }
    // Everything read again, into new text: the kept columns' memory is reused. What
    // it is read under is what the views were made with (a change meanwhile is the next scrape's).
    this.#rebuilt = true;
    this.#exposure = state.exposure;
    this.#limit = state.limit.limit;
    this.#maxLabelBytes = state.limit.maxLabelBytes;
    const cols = v?.cols ?? cache.spare ?? new ScrapeColumns();
    cols.clear();
    cache.reset();
    this.views = new CheckViews(new ScrapeText(), state.limit, state.exposure, cols);
    this.#copy = new ScrapeCopy(this.views, cols, null, null, null, 0);
  }

  /** The next check; `status` may be a FiguresList's shared object (what is kept of it is a copy). */
  add(status: CheckFigures): void {
    if (this.#copy !== null) {
      this.#copy.add(status);
      this.#copy.step(false);
      return;
    }
    const a = this.#a;
    if (a === null) {
      this.views.add(status);
      return;
    }
    const keys = this.#aKeys!;
    const k = this.#k;
    if (k < a.n && keys.ids[k] === status.id) {
      this.#k = k + 1;
      if (keys.same(k, status)) return;
      // One set of columns for every changed check (one each was ~15 KB of buffers, 60 MB a scrape at 4,000).
      const one = (this.#one ??= new ScrapeColumns());
      one.clear();
      this.#read++;
      if (this.views.gather(status, one, a.at[k]) && one.nitems === a.itemsOf(k) && one.nslots === a.slotsOf(k)) {
        a.replace(k, one);
        keys.set(k, status);
        return;
      }
      // Its items or slots are not as many (or it shows no series now): the rest goes into a second set.
      const copy = this.#copyFrom(k, k + 1);
      // Handed over: nothing is read in place from now on.
      this.#one = null;
      if (one.n === 1) copy.addRead(one, status);
      copy.step(false);
      return;
    }
    // Not the next kept check: added, or some were removed before it.
    if (!checkExposure(status, this.views.exposure).series) return;
    const copy = this.#copyFrom(k, k);
    copy.add(status);
    copy.step(false);
  }

  /** A second set from here on: the kept set's first `k` checks go over as they are; it goes on from check `next`. */
  #copyFrom(k: number, next: number): ScrapeCopy {
    const cache = this.#cache!;
    const b = cache.spare ?? new ScrapeColumns();
    const keys = cache.spareKeys ?? new Keys();
    cache.spare = null;
    cache.spareKeys = null;
    b.clear();
    keys.clear();
    const copy = new ScrapeCopy(this.views, b, this.#a, this.#aKeys, this.#current, k, keys);
    if (next > k) copy.skipTo(next);
    this.#copy = copy;
    return copy;
  }

  /** Some of what is left to write (a few hundred µs at most); false once there is nothing left. */
  work(): boolean {
    return this.#copy !== null && this.#copy.step();
  }

  /** The checks are all added: the views to write from. */
  done(): CheckViews {
    const cache = this.#cache;
    if (cache !== null) {
      const copy = this.#copy;
      if (copy === null) {
        // Kept checks past the last one seen were removed.
        this.#a!.truncate(this.#k);
        this.#aKeys!.truncate(this.#k);
        // Nothing changed shape: the second set is not held between scrapes.
        cache.spare = null;
        cache.spareKeys = null;
      } else {
        while (copy.step());
        this.#read += copy.read;
        this.views.cols = copy.cols;
        cache.views = this.views;
        cache.keys = copy.keys;
        if (this.#a !== null) {
          cache.spare = this.#a;
          // What it held is let go now, not when the next copy writes over it.
          this.#aKeys!.clear();
          cache.spareKeys = this.#aKeys;
        }
      }
      cache.lastRead = this.#read;
      cache.lastFull = this.#rebuilt;
      cache.updatedAt = performance.now();
      if (this.#rebuilt) {
        cache.pieces = this.views.text.count;
        cache.bytes = this.views.text.bytes;
        cache.exposure = this.#exposure;
        cache.limit = this.#limit;
        cache.maxLabelBytes = this.#maxLabelBytes;
      }
    }
    // Every check's current result is in the views now, and a scrape writes them all.
    if (!this.#pass) this.#state.limit.written(this.#start);
    this.#done = true;
    return this.views;
  }

  /** The scrape threw: what it kept is not trusted (forgotten at close()). */
  failed(): void {
    this.#done = false;
  }

  /** When the scrape ends, however: the kept columns are let go for the next scrape (or, not done, forgotten). */
  close(): void {
    const cache = this.#cache;
    if (cache === null) {
      this.#state.columns.give(this.views.cols);
      return;
    }
    // Left part way (a throw, or a reader that stopped): read whole next time.
    if (!this.#done) cache.reset();
    cache.owner = null;
  }
}
