// A runner's series in the Prometheus text exposition format (version 0.0.4),
// assembled family by family from each check's kept pieces (check-pieces.ts)
// and the runner's aggregate families, rendered each time (they are few).
// formatMetrics is synchronous: CheckRunner.metrics() has always returned a
// string. metricsChunks gives the same text in slices that leave the event
// loop free between them: at 100,000 checks a scrape is ~150 MB of text, and
// a synchronous render froze check scheduling for seconds (issue 19).
// prom-client renders the same families (src/metrics/runner-metrics.ts).
import { beginScrape, perCheckFamilies, piecesOf, type Scrape } from './check-pieces';
import { allFamilies, isPerCheck } from './families';
import type { CheckStatus } from './check-status';
import type { MetricsSource } from './metrics-snapshot';
import { metricsStateOf, type CheckPieces } from './metrics-state';
import { familyHeader, sampleLines } from './metrics-text';

export { allFamilies } from './families';
export { escapeLabelValue, renderFamilies } from './metrics-text';

const perCheckIndex = new Map(perCheckFamilies.map((f, i) => [f, i]));

function start(source: MetricsSource): { scrape: Scrape; statuses: CheckStatus[] } {
  const statuses = source.checkStatus();
  return { scrape: beginScrape(metricsStateOf(source), source.stats()), statuses };
}

/** Every series of a runner, aggregate and per check. */
export function formatMetrics(source: MetricsSource): string {
  const { scrape, statuses } = start(source);
  const pieces = statuses.map((s) => piecesOf(scrape, s));
  scrape.state.sweep(scrape.number);
  const out: string[] = [];
  for (const f of allFamilies) {
    out.push(familyHeader(f));
    const k = perCheckIndex.get(f);
    if (k === undefined) out.push(sampleLines(f, scrape.snap));
    else for (const p of pieces) if (p.text[k] !== '') out.push(p.text[k]);
  }
  return out.join('');
}

export interface MetricsChunksOptions {
  /** Longest stretch of work between two yields to the event loop, ms (default 5). */
  sliceMs?: number | undefined;
  /** Text per chunk, UTF-16 units, about (default 256 Ki). */
  chunkChars?: number | undefined;
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The text of formatMetrics(source), in chunks; between slices of at most
 * about `sliceMs` of work it waits for the event loop's next turn (timers,
 * I/O and results go first). The runner's aggregate series and the list of
 * checks are taken at the start; a check whose result comes during the
 * scrape may show it.
 */
export async function* metricsChunks(source: MetricsSource, options: MetricsChunksOptions = {}): AsyncGenerator<string, void, undefined> {
  for await (const parts of metricsParts(source, options)) yield parts.join('');
}

/**
 * metricsChunks() before the join: each chunk as the kept strings it is made
 * of (family headers, aggregate lines, each check's pieces). A server that
 * keeps a scrape for later requests keeps these references, not a copy of
 * the text (150 MB at 100,000 checks with five perfdata items each).
 */
export async function* metricsParts(source: MetricsSource, options: MetricsChunksOptions = {}): AsyncGenerator<string[], void, undefined> {
  const sliceMs = options.sliceMs ?? 5;
  const chunkChars = options.chunkChars ?? 256 * 1024;
  const scrape = beginScrape(metricsStateOf(source), source.stats());
  const statuses = source.eachCheckStatus?.() ?? source.checkStatus();
  let sliceStart = performance.now();
  const due = () => performance.now() - sliceStart >= sliceMs;
  const pause = async () => {
    await yieldToLoop();
    sliceStart = performance.now();
  };
  // Aggregate families as they are now, beside the list of checks.
  const global = new Map(allFamilies.filter((f) => !isPerCheck(f)).map((f) => [f, sampleLines(f, scrape.snap)]));
  const pieces: CheckPieces[] = [];
  for (const status of statuses) {
    pieces.push(piecesOf(scrape, status));
    if ((pieces.length & 63) === 0 && due()) await pause();
  }
  for (const step = scrape.state.sweepSteps(scrape.number); !step.next().done;) if (due()) await pause();
  let parts: string[] = [];
  let chars = 0;
  const add = (text: string) => {
    parts.push(text);
    chars += text.length;
  };
  for (const f of allFamilies) {
    add(familyHeader(f));
    const k = perCheckIndex.get(f);
    if (k === undefined) {
      add(global.get(f)!);
      continue;
    }
    for (let i = 0; i < pieces.length; i++) {
      const text = pieces[i].text[k];
      if (text !== '') add(text);
      if (chars >= chunkChars) {
        yield parts;
        parts = [];
        chars = 0;
      }
      if ((i & 1023) === 1023 && due()) await pause();
    }
  }
  if (chars > 0) yield parts;
}
