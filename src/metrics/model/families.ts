// Every metric family of a runner, in exposition order, and which of them
// are per check: a scrape writes those a family at a time over all checks
// (check-view.ts, check-lines.ts, native/metrics/scrape-lines.h).
import { checkFamilies } from './check-families';
import type { MetricFamily } from './metrics-snapshot';
import { perfdataFamilies } from './perfdata-families';
import { runnerFamilies } from './runner-families';

export const allFamilies: readonly MetricFamily[] = [...runnerFamilies, ...checkFamilies, ...perfdataFamilies];

/** A family whose samples are each one check's (labelled check="<id>", grouped by check in order). */
export function isPerCheck(f: MetricFamily): boolean {
  return f.labelNames[0] === 'check';
}
