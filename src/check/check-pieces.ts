// A check's series change only when its result, running flag or definition
// does (or what the runner exposes): its sample lines are kept per family
// and rendered again only then, so a scrape costs what changed (issue 19:
// rendering every check again took ~83 µs each, 1.7 s for 20,000 checks).
import type { CheckStatus } from './check-status';
import type { RunnerStats } from './definition';
import { allFamilies, isPerCheck } from './families';
import { exposeCheck, type Snapshot } from './metrics-snapshot';
import type { CheckPieces, RunnerMetricsState } from './metrics-state';
import { checkLinesRenderer } from './check-lines';

export const perCheckFamilies = allFamilies.filter(isPerCheck);
const renderCheck = checkLinesRenderer(perCheckFamilies);

const NONE: readonly string[] = perCheckFamilies.map(() => '');

/** One scrape of a runner: its number and the snapshot per-check families are rendered from. */
export interface Scrape {
  readonly state: RunnerMetricsState;
  readonly number: number;
  readonly snap: Snapshot;
}

export function beginScrape(state: RunnerMetricsState, stats: RunnerStats): Scrape {
  return { state, number: ++state.scrapes, snap: { stats, checks: [], perfdataLimit: state.limit.limit } };
}

function unchanged(p: CheckPieces, status: CheckStatus, generation: number): boolean {
  return p.definition === status.definition && p.last === status.last && p.running === status.running && p.generation === generation;
}

/** The check's pieces, rendered again if what they came from changed. */
export function piecesOf(scrape: Scrape, status: CheckStatus): CheckPieces {
  const { state, number } = scrape;
  const old = state.pieces.get(status.id);
  if (old !== undefined) {
    old.seenBy = Math.max(old.seenBy, number);
    // A later scrape (overlapping this sliced one) rendered them from newer state.
    if (old.renderedBy > number || unchanged(old, status, state.generation)) return old;
  }
  const c = exposeCheck(status, state.limit, state.exposure);
  let text = NONE;
  if (c !== null) text = renderCheck(c, scrape.snap);
  const p: CheckPieces = {
    definition: status.definition, last: status.last, running: status.running, generation: state.generation,
    renderedBy: number, seenBy: Math.max(old?.seenBy ?? 0, number), text,
  };
  state.pieces.set(status.id, p);
  return p;
}
