// A runner's snapshot and a family's samples made in slices of one shared
// budget per turn of the event loop (~5 ms of work): what the prom-client
// registry (runner-metrics.ts) is given, without holding the loop for every
// check at once.
import { isPerCheck } from '../model/families';
import { checkFiguresOf, exposeCheck, type CheckSnapshot, type MetricFamily, type MetricsSource, type Sample, type Snapshot } from '../model/metrics-snapshot';
import type { PerfdataExposure } from '../model/metrics-options';
import type { PerfdataLimit } from '../model/perfdata-limit';
import type { TurnBudget } from '../serve/turn-budget';

/** Checks between two looks at the clock. */
const STEP = 256;

/**
 * takeSnapshot(), sliced: the checks are read one at a time where the source
 * can. Not through a runner's checkFiguresList: the snapshot keeps each
 * status it is given, and that list reads every check into one object.
 */
export async function slicedSnapshot(source: MetricsSource, limit: PerfdataLimit, exposure: PerfdataExposure, turns: TurnBudget): Promise<Snapshot> {
  const since = limit.mark();
  const stats = source.stats();
  const checks: CheckSnapshot[] = [];
  const ids = new Set<string>();
  let n = 0;
  for (const status of checkFiguresOf(source)) {
    ids.add(status.id);
    const c = exposeCheck(status, limit, exposure);
    if (c !== null) checks.push(c);
    if (++n % STEP === 0) await turns.pause();
  }
  // Series of a removed check disappear, and so does what the cap held for
  // it; not of one read since this began (added meanwhile, read by another renderer).
  for (const step = limit.retainSteps(ids, since); !step.next().done;) await turns.pause();
  return { stats, checks, perfdataLimit: limit.limit };
}

/**
 * f.samples(snap), a few hundred checks at a time for a per-check family,
 * starting in a later turn: prom-client formats a family as soon as its
 * samples are given, so each family's formatting comes in a turn of its own.
 */
export async function slicedSamples(f: MetricFamily, snap: Snapshot, turns: TurnBudget): Promise<Sample[]> {
  await turns.next();
  if (!isPerCheck(f)) return f.samples(snap);
  const out: Sample[] = [];
  for (let i = 0; i < snap.checks.length; i += STEP) {
    for (const s of f.samples({ ...snap, checks: snap.checks.slice(i, i + STEP) })) out.push(s);
    await turns.pause();
  }
  return out;
}
