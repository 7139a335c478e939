// One scrape's view of each check: its status as the scrape began, the
// `{check="<id>"` its lines start with, and the perfdata items it exposes.
// A scrape renders the per-check families from these, one family a pass
// over all checks (the format wants each family's lines together). No text
// is kept between scrapes: kept per check it was ~150 MB at 100,000 checks
// with five perfdata items each, and RSS 700 MiB against issue 19's 400.
import type { CheckFigures } from './check-status';
import type { RunFigures } from './last-run';
import { allFamilies, isPerCheck } from './families';
import { checkExposure, type PerfdataExposure } from './metrics-options';
import type { PerfdataLimit, PerfItems } from './perfdata-limit';
import { baseUom } from './perfdata-units';
import type { ScrapeText } from './scrape-text';

export const perCheckFamilies = allFamilies.filter(isPerCheck);

const CHECK = Buffer.from('{check="', 'latin1');
const LABEL = Buffer.from(',label="', 'latin1');
const UOM = Buffer.from('",uom="', 'latin1');
const QUOTE = Buffer.from('"', 'latin1');

export interface CheckView {
  /** The definition's interval, ms. */
  readonly interval: number;
  readonly running: boolean;
  /** The last result as the scrape began (null before the first). */
  readonly last: RunFigures | null;
  /** lastStateChangeAt, NaN for null. */
  readonly changedAt: number;
  /** The scrape's text, and the piece `{check="<id>"` (no closing brace) in it: every per-check line starts its labels so. */
  readonly text: ScrapeText;
  readonly at: number;
  /** null: the check's perfdata series are off. Item j's `,label="…",uom="…"` is piece at + 1 + j. */
  readonly perf: PerfItems | null;
}

/**
 * One scrape's views of its checks, kept as columns: a view object per
 * check lived as long as the scrape and was promoted with it, every scrape
 * (~5 MB at 100,000 checks), and so did the status a source gives per
 * check (its figures are copied here; the status dies young). view(i)
 * gives one object, set to check i.
 */
export class CheckViews {
  // NaN first: these arrays hold doubles, never number boxes.
  readonly #interval: number[] = [NaN];
  readonly #changedAt: number[] = [NaN];
  readonly #running: boolean[] = [];
  readonly #last: Array<RunFigures | null> = [];
  readonly #at: number[] = [];
  readonly #perf: Array<PerfItems | null> = [];
  readonly #view: { interval: number; running: boolean; last: RunFigures | null; changedAt: number; text: ScrapeText; at: number; perf: PerfItems | null };

  constructor(readonly text: ScrapeText, readonly limit: PerfdataLimit, readonly exposure: PerfdataExposure) {
    this.#view = { interval: NaN, running: false, last: null, changedAt: NaN, text, at: 0, perf: null };
    this.#interval.length = 0;
    this.#changedAt.length = 0;
  }

  get length(): number {
    return this.#at.length;
  }

  /** Adds the check as its series see it, unless it exposes none; a new result is admitted to its caps now. */
  add(status: CheckFigures): void {
    const e = checkExposure(status, this.exposure);
    if (!e.series) return;
    const text = this.text;
    // The piece first: if it throws (past 4 GiB), no column is a row longer than the others.
    text.ascii(CHECK);
    text.escaped(status.id);
    text.ascii(QUOTE);
    this.#at.push(text.end());
    this.#interval.push(status.definition.interval);
    this.#changedAt.push(status.lastStateChangeAt ?? NaN);
    this.#running.push(status.running);
    this.#last.push(status.last);
    if (!e.perfdata) {
      this.#perf.push(null);
      return;
    }
    let perf = this.limit.readItems(status);
    if (!this.exposure.allLabels) perf = { ...perf, items: perf.items.filter((p) => this.exposure.labels(p.label)) };
    for (const p of perf.items) {
      text.ascii(LABEL);
      text.escaped(p.label);
      text.ascii(UOM);
      text.escaped(baseUom(p.uom));
      text.ascii(QUOTE);
      text.end();
    }
    this.#perf.push(perf);
  }

  /** Check i's view: the same object for every i, valid until the next call. */
  view(i: number): CheckView {
    const v = this.#view;
    v.interval = this.#interval[i];
    v.changedAt = this.#changedAt[i];
    v.running = this.#running[i];
    v.last = this.#last[i];
    v.at = this.#at[i];
    v.perf = this.#perf[i];
    return v;
  }
}
