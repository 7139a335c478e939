// One scrape's reading of a runner's checks into the kept columns
// (scrape-cache.ts says how), or, for any other source, into columns of its
// own.
import type { CheckFigures } from './check-status';
import { CheckViews } from './check-view';
import { checkExposure } from './metrics-options';
import type { RunnerMetricsState } from './metrics-state';
import type { ScrapeCache } from './scrape-cache';
import { ScrapeColumns } from './scrape-columns';
import { Keys } from './scrape-keys';
import { ScrapeText } from './scrape-text';

/** Pieces the kept text may gain past twice those of its last full read before a scrape reads every check again. */
const SPARE_PIECES = 65_536;

const ONE_OFF = 0;
const UPDATE = 1;
const COPY = 2;

/** One scrape's reading of its checks: add() each status in order, then done() (the views to write from), and close() at the end. */
export class ScrapeGather {
  readonly views: CheckViews;
  readonly #state: RunnerMetricsState;
  readonly #cache: ScrapeCache | null;
  #mode: number;
  /** The kept columns and what they were made from (UPDATE, COPY), else null. */
  #a: ScrapeColumns | null = null;
  #aKeys: Keys | null = null;
  /** Where COPY writes, and what from. */
  #b: ScrapeColumns | null = null;
  #bKeys: Keys | null = null;
  /** The next check of #a expected. */
  #k = 0;
  /** Checks #run0 … #run1 - 1 of #a, unchanged, to copy into #b before anything else is added. */
  #run0 = 0;
  #run1 = 0;
  #byId: Map<string, number> | null = null;
  /** A changed check read on its own (UPDATE). */
  #one: ScrapeColumns | null = null;
  #rebuilt = false;
  #done = false;
  #read = 0;

  /** `kept`: the source gives kept records (CheckRunner), so unchanged checks can be told by identity. */
  constructor(state: RunnerMetricsState, kept: boolean) {
    this.#state = state;
    const cache = kept && !state.cache.busy ? state.cache : null;
    this.#cache = cache;
    if (cache === null) {
      this.#mode = ONE_OFF;
      this.views = new CheckViews(new ScrapeText(), state.limit, state.exposure, state.columns.take());
      return;
    }
    cache.busy = true;
    const v = cache.views;
    if (v !== null && cache.exposure === state.exposure && cache.limit === state.limit.limit &&
      cache.maxLabelBytes === state.limit.maxLabelBytes && v.text.count <= 2 * cache.pieces + SPARE_PIECES) {
      this.#mode = UPDATE;
      this.views = v;
      this.#a = v.cols;
      this.#aKeys = cache.keys;
      return;
    }
    // Everything read again, into new text: the kept columns' memory is reused.
    this.#mode = COPY;
    this.#rebuilt = true;
    const cols = v?.cols ?? cache.spare ?? new ScrapeColumns();
    cols.clear();
    cache.reset();
    this.views = new CheckViews(new ScrapeText(), state.limit, state.exposure, cols);
    this.#b = cols;
    this.#bKeys = new Keys();
  }

  add(status: CheckFigures): void {
    if (this.#mode === ONE_OFF) {
      this.views.add(status);
      return;
    }
    if (this.#mode === UPDATE) {
      const a = this.#a!;
      const keys = this.#aKeys!;
      const k = this.#k;
      if (k < a.n && keys.ids[k] === status.id) {
        this.#k = k + 1;
        if (keys.same(k, status)) return;
        const one = (this.#one ??= new ScrapeColumns());
        one.clear();
        this.#read++;
        if (this.views.gather(status, one, a.at[k]) && one.nitems === a.itemsOf(k) && one.nslots === a.slotsOf(k)) {
          a.replace(k, one);
          keys.set(k, status);
          return;
        }
        this.#copyFrom(k);
        this.#flush();
        if (one.n === 1) {
          this.#b!.appendRun(one, 0, 1);
          this.#bKeys!.push(status);
        }
        this.#k = k + 1;
        return;
      }
      // Not the next kept check: added, or some were removed before it.
      if (!checkExposure(status, this.views.exposure).series) return;
      this.#copyFrom(k);
    }
    this.#copied(status);
  }

  /** From check k of the kept columns on, a second set: the first k checks go over as they are. */
  #copyFrom(k: number): void {
    const cache = this.#cache!;
    const b = cache.spare ?? new ScrapeColumns();
    cache.spare = null;
    b.clear();
    this.#b = b;
    this.#bKeys = new Keys();
    this.#mode = COPY;
    this.#run0 = 0;
    this.#run1 = k;
  }

  #flush(): void {
    if (this.#run1 > this.#run0) {
      this.#b!.appendRun(this.#a!, this.#run0, this.#run1);
      this.#bKeys!.pushFrom(this.#aKeys!, this.#run0, this.#run1);
    }
    this.#run0 = this.#run1 = 0;
  }

  /** COPY: the status's check from the kept columns if unchanged, else read. */
  #copied(status: CheckFigures): void {
    const a = this.#a;
    let j = -1;
    if (a !== null) {
      const keys = this.#aKeys!;
      if (this.#k < a.n && keys.ids[this.#k] === status.id) {
        j = this.#k;
      } else {
        if (this.#byId === null) {
          this.#byId = new Map();
          for (let i = 0; i < a.n; i++) this.#byId.set(keys.ids[i], i);
        }
        j = this.#byId.get(status.id) ?? -1;
      }
      if (j >= 0) {
        this.#k = j + 1;
        if (keys.same(j, status)) {
          if (j === this.#run1 && this.#run1 > this.#run0) {
            this.#run1++;
          } else {
            this.#flush();
            this.#run0 = j;
            this.#run1 = j + 1;
          }
          return;
        }
      }
    }
    this.#flush();
    this.#read++;
    if (this.views.gather(status, this.#b!, j >= 0 ? a!.at[j] : -1)) this.#bKeys!.push(status);
  }

  /** The checks are all added: the views to write from. */
  done(): CheckViews {
    const cache = this.#cache;
    if (cache !== null) {
      if (this.#mode === UPDATE) {
        // Kept checks past the last one seen were removed.
        this.#a!.truncate(this.#k);
        this.#aKeys!.truncate(this.#k);
        // Nothing changed shape: the second set is not held between scrapes.
        cache.spare = null;
      } else {
        this.#flush();
        const old = this.#a;
        this.views.cols = this.#b!;
        cache.views = this.views;
        cache.keys = this.#bKeys!;
        if (old !== null && old !== this.#b) cache.spare = old;
      }
      cache.lastRead = this.#read;
      cache.lastFull = this.#rebuilt;
      if (this.#rebuilt) {
        cache.pieces = this.views.text.count;
        cache.exposure = this.#state.exposure;
        cache.limit = this.#state.limit.limit;
        cache.maxLabelBytes = this.#state.limit.maxLabelBytes;
      }
    }
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
    cache.busy = false;
  }
}
