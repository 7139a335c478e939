// What /metrics serves (serveMetrics): a prom-client Registry as it is, or
// any source of the text format; createRunnerSource's also renders in chunks
// and refreshes between scrapes.
/** What is served: a prom-client Registry, or anything that renders the text format. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
  /**
   * The same text in chunks, rendered in slices (createRunnerSource): served
   * chunked, never joined into one string. A chunk is text, or bytes
   * (UTF-8, written as they are). It is asked for when the readers are near:
   * a body past keepChars is made at their pace.
   */
  chunks?(): AsyncIterable<string | Uint8Array>;
  /**
   * Called with a byte chunk every response has written and the render has
   * let go: the source may reuse its memory (createRunnerSource does). A
   * chunk of a render that keeps its chunks is never given back.
   */
  release?(chunk: Uint8Array): void;
  /**
   * Brings what the next render reads up to date, in slices, with nothing
   * written; called every refreshMs while served (createRunnerSource reads
   * the checks that changed since the last scrape, src/metrics/scrape/scrape-warm.ts).
   * It may skip a pass when what it keeps is younger than minAgeMs, and
   * should stop soon once `signal` is aborted (at close(), which does not
   * wait for it).
   */
  refresh?(minAgeMs: number, signal: AbortSignal): Promise<unknown>;
}
