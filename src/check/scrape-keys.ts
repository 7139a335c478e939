// What each check of a runner's kept scrape columns was made from
// (scrape-cache.ts): its definition, last result, running flag and when its
// state last changed, by identity. A check whose four are the same is not
// read again.
import type { CheckFigures } from './check-status';

/** What each check of a set of columns was made from, by position. */
export class Keys {
  ids: string[] = [];
  defs: object[] = [];
  lasts: (object | null)[] = [];
  running: boolean[] = [];
  changed: number[] = [];

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
    this.set(this.ids.length, s);
  }

  pushFrom(from: Keys, j0: number, j1: number): void {
    for (let j = j0; j < j1; j++) {
      this.ids.push(from.ids[j]);
      this.defs.push(from.defs[j]);
      this.lasts.push(from.lasts[j]);
      this.running.push(from.running[j]);
      this.changed.push(from.changed[j]);
    }
  }

  truncate(n: number): void {
    this.ids.length = Math.min(n, this.ids.length);
    this.defs.length = this.ids.length;
    this.lasts.length = this.ids.length;
    this.running.length = this.ids.length;
    this.changed.length = this.ids.length;
  }
}
