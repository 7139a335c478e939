// A runner's kept scrape columns brought up to date between scrapes, with
// nothing written (issue 19). The first scrape of a process reads every
// check: at 100,000 checks that was 3.5–5.4 s over HTTP under load, against
// ~1 s for the scrapes after it, and a Prometheus that starts scraping late
// (service discovery after a deploy, a restarted server) meets it; a long
// scrape interval likewise reads every result that came meanwhile at once.
// A warm pass is what a scrape does up to its writing (scrape-gather.ts):
// the checks read again are the ones that changed, and the next scrape finds
// them read. It runs only while no scrape holds the kept columns, and a
// streamed scrape that starts meanwhile waits for it (warmingOf) rather
// than read every check on its own.
import { checkDefinitionOf, checkFiguresList, eachCheckFigures } from '../../check/model/figures-list';
import type { MetricsSource } from '../model/metrics-snapshot';
import { metricsStateOf } from './metrics-state';
import { ScrapeGather } from './scrape-gather';

/** Checks between two looks at whether to pause. */
const STEP = 64;

export interface WarmResult {
  /** Whether the pass ran to its end: false when the source is not a runner, a scrape or pass held the kept columns, they were updated within minAgeMs, or `signal` was aborted. */
  ran: boolean;
  /** Checks read (not copied). */
  read: number;
  /** Whether every check was read into new text. */
  full: boolean;
}

const NOT_RUN: WarmResult = Object.freeze({ ran: false, read: 0, full: false });

const warming = new WeakMap<object, Promise<WarmResult>>();

/** The warm pass of this source in flight, if any: a streamed scrape awaits it before it starts (it never rejects). */
export function warmingOf(source: object): Promise<WarmResult> | undefined {
  return warming.get(source);
}

/**
 * One warm pass over a runner's checks: `pause()` is awaited every 64
 * checks when `due()` says this turn's work is done. Nothing happens for a
 * source that is not a CheckRunner (read whole at each scrape anyway),
 * while a scrape or another pass holds the kept columns, or when they were
 * brought up to date less than `minAgeMs` ago. As a scrape does, a pass
 * forgets the perfdata caps of the checks the runner no longer has. With
 * `signal` aborted it stops at its next pause and what it kept is let go
 * (the next scrape reads every check).
 */
export function warmScrape(
  source: MetricsSource, due: () => boolean, pause: () => Promise<void>, minAgeMs = 0, signal: AbortSignal | null = null,
): Promise<WarmResult> {
  const inFlight = warming.get(source);
  if (inFlight !== undefined) return inFlight.then(() => NOT_RUN);
  const state = metricsStateOf(source);
  const cache = state.cache;
  const has = source[checkDefinitionOf];
  if (typeof source[checkFiguresList] !== 'function' || typeof source[eachCheckFigures] !== 'function' || typeof has !== 'function' ||
    cache.owner?.deref() !== undefined || performance.now() - cache.updatedAt < minAgeMs || signal?.aborted === true) {
    return Promise.resolve(NOT_RUN);
  }
  const stopped = async (): Promise<boolean> => {
    await pause();
    return signal?.aborted === true;
  };
  const limit = state.limit;
  const run = async (): Promise<WarmResult> => {
    const since = limit.mark();
    const list = source[checkFiguresList]!();
    const gather = new ScrapeGather(state, (id) => has.call(source, id), true);
    // The caps admit what the pass reads provisionally (perfdata-limit.ts), in each synchronous slice and no longer.
    const adding = (from: number): number => {
      const end = Math.min(from + STEP, list.length);
      limit.provisional = true;
      try {
        for (let i = from; i < end; i++) gather.add(list.read(i));
      } finally {
        limit.provisional = false;
      }
      return end;
    };
    const working = (): boolean => {
      limit.provisional = true;
      try {
        return gather.work();
      } finally {
        limit.provisional = false;
      }
    };
    try {
      for (let i = 0; i < list.length;) {
        i = adding(i);
        if (due() && (await stopped())) return NOT_RUN;
      }
      while (working()) if (due() && (await stopped())) return NOT_RUN;
      limit.provisional = true;
      try {
        gather.done();
      } finally {
        limit.provisional = false;
      }
      const result = { ran: true, read: cache.lastRead, full: cache.lastFull };
      // The caps of checks removed since the last scrape or pass: a result a pass read is held there too.
      const ids = { has: (id: string) => has.call(source, id) !== undefined };
      for (const step = limit.retainSteps(ids, since); !step.next().done;) if (due()) await pause();
      return result;
    } catch (e) {
      gather.failed();
      throw e;
    } finally {
      gather.close();
      warming.delete(source);
      settle();
    }
  };
  // Set before the pass starts (one that never pauses has ended when run() returns), gone when it ends.
  let settle: () => void = () => undefined;
  warming.set(source, new Promise<WarmResult>((resolve) => (settle = () => resolve(NOT_RUN))));
  const p = run();
  return p;
}
