// What CheckRunner.checkStatus() tells about one configured check: enough for
// per-check metrics, read at scrape time instead of counted on every result.
import type { KeptDefinition, CheckRunResult } from './definition';
import type { RunFigures } from './last-run';

export interface CheckStatus {
  id: string;
  /** The definition as added (durations in ms); a new object when the check was removed and added again. */
  definition: Readonly<KeptDefinition>;
  running: boolean;
  /** The last completed run, or null before the first. */
  last: CheckRunResult | null;
  /** finishedAt of the first run, or of the last run whose state differed from the run before. */
  lastStateChangeAt: number | null;
}

/**
 * A CheckStatus as the per-check series read it: `last` may be the runner's
 * record of the result instead of the result (internal; a CheckStatus is one).
 */
export interface CheckFigures extends Omit<CheckStatus, 'last'> {
  last: RunFigures | null;
}

/** A copy of `s` to keep: a FiguresList's reads share one object. */
export function copyFigures(s: CheckFigures): CheckFigures {
  return { id: s.id, definition: s.definition, running: s.running, last: s.last, lastStateChangeAt: s.lastStateChangeAt };
}
