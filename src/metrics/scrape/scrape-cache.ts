// A runner's scrape columns kept from one scrape to the next, and each scrape
// reading again only the checks whose figures changed since (issue 19: a
// scrape costs what changed, not what exists). Reading every check into
// columns was ~60 % of a scrape's event-loop time at 100,000 checks, where
// a scrape every 5 s sees a few thousand new results.
//
// A check's columns are made from its definition, its last result, its
// running flag and when its state last changed, under the runner's
// perfdata exposure and caps (check-view.ts): the kept columns remember
// those of each check, by identity, and the next scrape compares. Only a
// source whose figures are kept records (CheckRunner's [eachCheckFigures]:
// an immutable record per result, its own copy of each definition) and
// that tells a check's definition now ([checkDefinitionOf]) is read this
// way; any other is read whole each scrape, as is a scrape that starts
// while another holds the kept columns. A result's perfdata items are read
// once, at the first scrape after it arrives.
//
// A changed check is read into columns of its own first; with as many items
// and slots as before it is copied over its old place. Otherwise (a first
// result, a check added, removed or no longer exposed) the scrape goes on
// into a second set of columns, copying unchanged checks over in runs of at
// most 2,048 between its looks at the clock, and that set is kept. Checks
// come in the runner's order, which keeps the kept checks' order: a kept
// check that is not the next status is passed over if the runner no longer
// has it (with that definition), else the status is a check added since.
// The pieces of text are kept too, and a changed check's number pieces are
// new ones: once they are more than twice those of the last full read (plus
// 65,536), the next scrape reads every check again into new text.
//
// Served, a runner's kept columns are also brought up to date between
// scrapes by warm passes (scrape-warm.ts), which do all of this but the
// writing: a scrape then finds most checks read.
import type { CheckViews } from './check-view';
import type { ScrapeColumns } from './scrape-columns';
import { Keys } from './scrape-keys';

/** The columns and text a runner's scrapes keep (in its RunnerMetricsState). */
export class ScrapeCache {
  views: CheckViews | null = null;
  keys = new Keys();
  /** The columns a scrape that goes on into a second set last left: the next such scrape writes into them. */
  spare: ScrapeColumns | null = null;
  /** Their keys, cleared (kept while `spare` is). */
  spareKeys: Keys | null = null;
  /**
   * The scrape reading or writing the kept columns, held weakly: one whose
   * reader dropped it unfinished (no return(), so no finally) is collected,
   * and the next scrape starts over instead of finding them held for ever.
   */
  owner: WeakRef<object> | null = null;
  /** What the kept columns were made under. */
  exposure: unknown = null;
  limit = -1;
  maxLabelBytes = -1;
  /** Pieces and bytes of text after the last full read. */
  pieces = 0;
  bytes = 0;
  /** Checks the last scrape read (not copied), and whether it read all into new text. */
  lastRead = 0;
  lastFull = false;
  /** When a scrape or a warm pass (scrape-warm.ts) last brought the kept columns up to date (performance.now()). */
  updatedAt = -Infinity;

  /** Nothing kept: the next scrape reads every check. */
  reset(): void {
    this.views = null;
    this.keys = new Keys();
    this.spare = null;
    this.spareKeys = null;
    this.updatedAt = -Infinity;
  }
}
