// The second set of columns a scrape of a runner goes on into when its
// checks no longer fit the kept set in place (scrape-cache.ts): unchanged
// checks copied over from the kept set in runs, changed and added ones
// read, in the runner's order, a bounded step at a time.
import { copyFigures, type CheckFigures } from '../../check/model/check-status';
import type { CheckViews } from './check-view';
import type { ScrapeColumns } from './scrape-columns';
import { Keys } from './scrape-keys';

/** Checks of the kept columns copied at most in one step (~0.3 ms; 100,000 at once held the loop 20–60 ms). */
const RUN_MAX = 2048;

/** A kept check's definition as the source has it now (undefined: gone), to tell a removed check from one yet to come. */
export type CurrentDefinition = (id: string) => object | undefined;

export class ScrapeCopy {
  /** Checks read (not copied). */
  read = 0;
  /** The next check of the kept set expected. */
  #k = 0;
  /** Checks #run0 … #run1 - 1 of the kept set, unchanged, not yet queued. */
  #run0 = 0;
  #run1 = 0;
  /**
   * What is yet to be written, in order: a run of kept checks (two numbers,
   * j0 and j1), a check read on its own (-1, its index in #ones), or a
   * status to read (it and the piece of its id, or -1).
   */
  readonly #queue: (number | CheckFigures)[] = [];
  #head = 0;
  readonly #ones: [ScrapeColumns, CheckFigures][] = [];

  /**
   * Into `cols` and `keys` (both cleared), from the kept set `a` (made from
   * `aKeys`; null: every check read), its first `k` checks as they are.
   */
  constructor(readonly views: CheckViews, readonly cols: ScrapeColumns, readonly a: ScrapeColumns | null, readonly aKeys: Keys | null,
    readonly current: CurrentDefinition | null, k: number, readonly keys = new Keys()) {
    if (a !== null) cols.reserve(a.n, a.nitems, a.nslots);
    for (let j = 0; j < k; j += RUN_MAX) this.#queue.push(j, Math.min(k, j + RUN_MAX));
    this.#k = k;
  }

  /** Goes on from kept check `k` (those before it that were not queued are not the scrape's). */
  skipTo(k: number): void {
    this.#k = k;
  }

  /** Check 0 of `one`, read from `status` already (a copy is kept: a FiguresList reads into one object). */
  addRead(one: ScrapeColumns, status: CheckFigures): void {
    this.#closeRun();
    this.#queue.push(-1, this.#ones.length);
    this.#ones.push([one, copyFigures(status)]);
  }

  /** The status's check from the kept set if unchanged, else read (from a copy of `status`, queued). */
  add(status: CheckFigures): void {
    const a = this.a;
    let j = -1;
    if (a !== null) {
      const keys = this.aKeys!;
      const current = this.current!;
      // Kept checks no longer in the source (or replaced: a new definition) are passed over; one still
      // there comes later, so a status that is not it is a check added since.
      let k = this.#k;
      while (k < a.n && keys.ids[k] !== status.id && current(keys.ids[k]) !== keys.defs[k]) k++;
      this.#k = k;
      if (k < a.n && keys.ids[k] === status.id) {
        j = k;
        this.#k = k + 1;
        if (keys.same(j, status)) {
          if (j === this.#run1 && this.#run1 - this.#run0 < RUN_MAX) {
            this.#run1++;
          } else {
            this.#closeRun();
            this.#run0 = j;
            this.#run1 = j + 1;
          }
          return;
        }
      }
    }
    this.#closeRun();
    this.#queue.push(copyFigures(status), j >= 0 ? a!.at[j] : -1);
  }

  /** Queues the run of unchanged checks so far. */
  #closeRun(): void {
    if (this.#run1 > this.#run0) this.#queue.push(this.#run0, this.#run1);
    this.#run0 = this.#run1 = 0;
  }

  /**
   * Writes the first of what is queued (a few hundred µs at most); false if
   * nothing was. `all`: the run of unchanged checks still being added to is
   * written too, if nothing else is queued; false (while checks are added)
   * leaves it to grow. Closed after each add, the runs were a check or two
   * long: a copy of 20,000 checks made 110,000 typed-array views.
   */
  step(all = true): boolean {
    const q = this.#queue;
    if (this.#head === q.length) {
      if (!all) return false;
      this.#closeRun();
      if (this.#head === q.length) return false;
    }
    const x = q[this.#head];
    const y = q[this.#head + 1] as number;
    q[this.#head] = q[this.#head + 1] = 0;
    this.#head += 2;
    if (this.#head === q.length) {
      q.length = 0;
      this.#head = 0;
    }
    if (typeof x !== 'number') {
      this.read++;
      if (this.views.gather(x, this.cols, y)) this.keys.push(x);
    } else if (x < 0) {
      const [one, status] = this.#ones[y];
      this.cols.appendRun(one, 0, 1);
      this.keys.push(status);
    } else {
      this.cols.appendRun(this.a!, x, y);
      this.keys.pushFrom(this.aKeys!, x, y);
    }
    return true;
  }
}
