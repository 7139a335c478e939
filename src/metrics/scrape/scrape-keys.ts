// What each check of a runner's kept scrape columns was made from
// (scrape-cache.ts): its definition, last result, running flag and when its
// state last changed, by identity. A check whose four are the same is not
// read again.

import type { CheckFigures } from '../../check/model/check-status';

/**
 * What each check of a set of columns was made from, by position: checks
 * 0 … n - 1. The arrays keep their length when checks go (clear, truncate),
 * so a set reused by the next scrape that copies (ScrapeCache.spareKeys)
 * writes over them: made anew by push, the five arrays of 100,000 checks
 * were ~12 MB of the old generation a scrape, grown in steps.
 */
export class Keys {
  ids: string[] = [];
  defs: (object | null)[] = [];
  lasts: (object | null)[] = [];
  running: boolean[] = [];
  changed: number[] = [];
  /** Checks held. */
  n = 0;

  same(j: number, s: CheckFigures): boolean {
    const c = s.lastStateChangeAt ?? NaN;
    const k = this.changed[j];
    return this.defs[j] === s.definition && this.lasts[j] === s.last && this.running[j] === s.running && (k === c || (Number.isNaN(k) && Number.isNaN(c)));
  }

  set(j: number, s: CheckFigures): void {
    this.ids[j] = s.id;
    this.defs[j] = s.definition;
    this.lasts[j] = s.last;
    this.running[j] = s.running;
    this.changed[j] = s.lastStateChangeAt ?? NaN;
  }

  push(s: CheckFigures): void {
    this.set(this.n++, s);
  }

  pushFrom(from: Keys, j0: number, j1: number): void {
    let n = this.n;
    for (let j = j0; j < j1; j++, n++) {
      this.ids[n] = from.ids[j];
      this.defs[n] = from.defs[j];
      this.lasts[n] = from.lasts[j];
      this.running[n] = from.running[j];
      this.changed[n] = from.changed[j];
    }
    this.n = n;
  }

  /** The first `n` checks only (what the rest held is let go). */
  truncate(n: number): void {
    if (n >= this.n) return;
    this.#drop(n, this.n);
    this.n = n;
  }

  /** No checks, the room kept. */
  clear(): void {
    this.truncate(0);
  }

  /** Lets go of the ids, definitions and results of checks a … b - 1. */
  #drop(a: number, b: number): void {
    this.ids.fill('', a, b);
    this.defs.fill(null, a, b);
    this.lasts.fill(null, a, b);
  }
}
