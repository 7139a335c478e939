// A runner's series in the Prometheus text exposition format (version 0.0.4),
// rendered at each scrape from the checks' statuses, read into columns
// (check-view.ts) and written one family at a time over all checks by the
// addon (native/metrics/scrape-lines.h, check-lines.ts), and the runner's
// aggregate families. formatMetrics is synchronous: CheckRunner.metrics()
// has always returned a string. metricsChunks gives the same text in slices
// that leave the event loop free between them: at 100,000 checks a scrape is
// ~150 MB of text, and a synchronous render froze check scheduling for
// seconds (issue 19). prom-client renders the same families
// (src/metrics/prom/runner-metrics.ts).
import { lineFamily, type LineFamily } from './check-lines';
import { perCheckFamilies } from './check-view';
import { allFamilies } from '../model/families';
import { checkDefinitionOf, checkFiguresList, eachCheckFigures } from '../../check/model/figures-list';
import { checkFiguresOf, type MetricFamily, type MetricsSource, type Snapshot } from '../model/metrics-snapshot';
import { metricsStateOf, type RunnerMetricsState } from './metrics-state';
import type { ChunkPool } from './chunk-pool';
import { CHUNK_BYTES, LineBytes } from './line-bytes';
import { familyHeader, sampleLines } from '../text/metrics-text';
import { ScrapeGather, type CurrentDefinition } from './scrape-gather';
import { warmingOf } from './scrape-warm';

export { allFamilies } from '../model/families';
export { escapeLabelValue, renderFamilies } from '../text/metrics-text';

const writerOf = new Map<MetricFamily, LineFamily>(perCheckFamilies.map((f) => [f, lineFamily(f)]));

/** What the runner's aggregate families are rendered from (its stats as the scrape begins). */
function aggregateSnapshot(source: MetricsSource, state: RunnerMetricsState): Snapshot {
  return { stats: source.stats(), checks: [], perfdataLimit: state.limit.limit };
}

/** For a source of kept records (CheckRunner), whose unchanged checks a scrape tells by identity: its checks' definitions now. */
function currentOf(source: MetricsSource): CurrentDefinition | null {
  const of = source[checkDefinitionOf];
  return typeof source[eachCheckFigures] === 'function' && typeof of === 'function' ? (id) => of.call(source, id) : null;
}

/** Every series of a runner, aggregate and per check (as UTF-8 takes it: a lone surrogate in an id or label comes out as U+FFFD). */
export function formatMetrics(source: MetricsSource): string {
  const state = metricsStateOf(source);
  const snap = aggregateSnapshot(source, state);
  const since = state.limit.mark();
  const statuses = [...checkFiguresOf(source)];
  const gather = new ScrapeGather(state, currentOf(source));
  try {
    for (const s of statuses) gather.add(s);
    const views = gather.done();
    // Series of a removed check disappear, and so does what the cap held for it.
    state.limit.retain(new Set(statuses.map((s) => s.id)), since);
    const out = new LineBytes();
    for (const f of allFamilies) {
      out.raw(familyHeader(f));
      const w = writerOf.get(f);
      if (w === undefined) out.raw(sampleLines(f, snap));
      else for (let i = 0; i < views.length;) i = out.lines(w.code, w.name, views, i, views.length);
    }
    return Buffer.concat(out.take(true)).toString('utf8');
  } catch (e) {
    gather.failed();
    throw e;
  } finally {
    gather.close();
  }
}

/** A budget of work per turn of the event loop that others take from too (src/metrics/serve/turn-budget.ts). */
export interface LoopBudget {
  /** This turn's budget is spent. */
  readonly due: boolean;
  /** Resolves in a later turn, whose budget starts then. */
  next(): Promise<void>;
}

export interface MetricsChunksOptions {
  /** Longest stretch of work between two yields to the event loop, ms (default 5). */
  sliceMs?: number | undefined;
  /**
   * A turn budget shared with others on this thread (a server's writers of
   * the same response): used instead of sliceMs, so that making and
   * writing a scrape together take no more than it in a turn.
   */
  budget?: LoopBudget | undefined;
  /** UTF-8 bytes per chunk, about (default 1 Mi). */
  chunkBytes?: number | undefined;
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The text of formatMetrics(source) as UTF-8, in chunks; between slices of
 * at most about `sliceMs` of work it waits for the event loop's next turn
 * (timers, I/O and results go first). The runner's aggregate series and the
 * list of checks are taken at the start, and each check's status is read
 * once, so all its series show the same result even if another comes
 * during the scrape. The chunks are made as they are asked for: a consumer
 * that stops asking holds no more than the chunks it has. A chunk ends
 * between two characters, never inside one.
 */
export async function* metricsBytes(
  source: MetricsSource, options: MetricsChunksOptions = {}, pool: ChunkPool | null = null,
): AsyncGenerator<Buffer, void, undefined> {
  const sliceMs = options.sliceMs ?? 5;
  const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
  if (!(chunkBytes >= 1)) throw new TypeError(`chunkBytes must be at least 1, got ${String(chunkBytes)}`);
  let sliceStart = performance.now();
  const budget = options.budget;
  const due = budget !== undefined ? () => budget.due : () => performance.now() - sliceStart >= sliceMs;
  const pause = async () => {
    if (budget !== undefined) await budget.next();
    else await yieldToLoop();
    sliceStart = performance.now();
  };
  // A warm pass in flight holds the kept columns: this scrape starts where it ends, instead of reading every check on its own.
  await warmingOf(source)?.catch(() => undefined);
  const state = metricsStateOf(source);
  const snap = aggregateSnapshot(source, state);
  const since = state.limit.mark();
  // A runner's checks as a list read into one object, with its own record of which checks it has (nothing made per check).
  const list = source[checkFiguresList]?.() ?? null;
  const has = source[checkDefinitionOf];
  const statuses = list === null || has === undefined ? checkFiguresOf(source) : null;
  // Aggregate families as they are now, beside the list of checks.
  const aggregate = new Map(allFamilies.filter((f) => !writerOf.has(f)).map((f) => [f, sampleLines(f, snap)]));
  // Closed when the scrape ends or its reader stops (return()); one dropped unfinished is collected, and its hold on the kept columns with it (scrape-cache.ts).
  const gather = new ScrapeGather(state, currentOf(source));
  try {
    // The checks whose perfdata caps are kept: those read, or of a runner, those it still has.
    let ids: { has(id: string): boolean };
    if (statuses === null) {
      for (let i = 0; i < list!.length; i++) {
        gather.add(list!.read(i));
        if ((i & 63) === 63 && due()) await pause();
      }
      ids = { has: (id: string) => has!.call(source, id) !== undefined };
    } else {
      const read = new Set<string>();
      for (const status of statuses) {
        read.add(status.id);
        gather.add(status);
        if ((read.size & 63) === 0 && due()) await pause();
      }
      ids = read;
    }
    while (gather.work()) if (due()) await pause();
    const views = gather.done();
    for (const step = state.limit.retainSteps(ids, since); !step.next().done;) if (due()) await pause();
    // Not needed while the text is made (it is 100,000 ids at that size).
    if (ids instanceof Set) ids.clear();
    // Chunks from the pool of whoever gives them back once written (a /metrics server's source).
    const out = new LineBytes(chunkBytes, pool?.size === chunkBytes ? pool : null);
    for (const f of allFamilies) {
      out.raw(familyHeader(f));
      const w = writerOf.get(f);
      if (w === undefined) {
        out.raw(aggregate.get(f)!);
        continue;
      }
      for (let i = 0; i < views.length;) {
        i = out.lines(w.code, w.name, views, i, views.length);
        if (out.full) for (const b of out.take(false)) yield b;
        if (due()) await pause();
      }
    }
    for (const b of out.take(true)) yield b;
  } catch (e) {
    gather.failed();
    throw e;
  } finally {
    gather.close();
  }
}

/** metricsBytes() as text, a chunk a string. */
export async function* metricsChunks(source: MetricsSource, options: MetricsChunksOptions = {}): AsyncGenerator<string, void, undefined> {
  for await (const b of metricsBytes(source, options)) yield b.toString('utf8');
}
