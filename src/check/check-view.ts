// One scrape's view of each check: its status as the scrape began, the
// `{check="<id>"` its lines start with, and the perfdata items it exposes.
// A scrape renders the per-check families from these, one family a pass
// over all checks (the format wants each family's lines together). No text
// is kept between scrapes: kept per check it was ~150 MB at 100,000 checks
// with five perfdata items each, and RSS 700 MiB against issue 19's 400.
import type { CheckStatus } from './check-status';
import { allFamilies, isPerCheck } from './families';
import { checkExposure, type PerfdataExposure } from './metrics-options';
import type { PerfdataLimit, PerfItems } from './perfdata-limit';
import { escapeLabelValue } from './metrics-text';
import { baseUom } from './perfdata-units';
import type { ScrapeText } from './scrape-text';

export const perCheckFamilies = allFamilies.filter(isPerCheck);

export interface CheckView {
  readonly status: CheckStatus;
  /** The scrape's text, and the piece `{check="<id>"` (no closing brace) in it: every per-check line starts its labels so. */
  readonly text: ScrapeText;
  readonly at: number;
  /** null: the check's perfdata series are off. Item j's `,label="…",uom="…"` is piece at + 1 + j. */
  readonly perf: PerfItems | null;
}

/** The check as its series see it, or null when it exposes none; a new result is admitted to its caps now. */
export function viewOf(status: CheckStatus, limit: PerfdataLimit, exposure: PerfdataExposure, text: ScrapeText): CheckView | null {
  const e = checkExposure(status, exposure);
  if (!e.series) return null;
  const at = text.add(`{check="${escapeLabelValue(status.id)}"`);
  if (!e.perfdata) return { status, text, at, perf: null };
  let perf = limit.readItems(status);
  if (!exposure.allLabels) perf = { ...perf, items: perf.items.filter((p) => exposure.labels(p.label)) };
  for (const p of perf.items) text.add(`,label="${escapeLabelValue(p.label)}",uom="${escapeLabelValue(baseUom(p.uom))}"`);
  return { status, text, at, perf };
}
