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
// an immutable record per result, its own copy of each definition) is
// read this way; any other is read whole each scrape, as is a scrape that
// starts while another holds the kept columns.
//
// A changed check is read into columns of its own first; with as many items
// and slots as before it is copied over its old place. Otherwise (a first
// result, a check added, removed or no longer exposed) the scrape goes on
// into a second set of columns, copying unchanged checks over in runs, and
// that set is kept. The pieces of text are kept too, and a changed check's
// number pieces are new ones: once they are more than twice those of the
// last full read, the next scrape reads every check again into new text.
import type { CheckViews } from './check-view';
import type { ScrapeColumns } from './scrape-columns';
import { Keys } from './scrape-keys';

/** The columns and text a runner's scrapes keep (in its RunnerMetricsState). */
export class ScrapeCache {
  views: CheckViews | null = null;
  keys = new Keys();
  /** The columns a scrape that goes on into a second set last left: the next such scrape writes into them. */
  spare: ScrapeColumns | null = null;
  /** Held by the scrape reading or writing the kept columns. */
  busy = false;
  /** What the kept columns were made under. */
  exposure: unknown = null;
  limit = -1;
  maxLabelBytes = -1;
  /** Pieces after the last full read. */
  pieces = 0;
  /** Checks the last scrape read (not copied), and whether it read all into new text. */
  lastRead = 0;
  lastFull = false;

  /** Nothing kept: the next scrape reads every check. */
  reset(): void {
    this.views = null;
    this.keys = new Keys();
    this.spare = null;
  }
}
