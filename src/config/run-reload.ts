// What `noshell run` does with its checks file: load it whole (schema,
// macros, user lookup, root refusal), at start and again on SIGHUP, where
// only the definitions that changed are copied from the loading thread.
import type { RunnerMetricsOptions } from '../metrics/scrape/metrics-state';
import { quoteName } from '../util/quote-text';
import { loadChecks } from './checks-file-load';
import { LoadAborted, localChecksSource, openChecksFileOffThread, type LastLoad } from './checks-file-thread';
import { resolvePairs, withIdentity } from './checks-identity';
import { StaleKnown, type KnownChecks } from './checks-known';
import type { AppliedChecks, KeyedChecks } from './checks-reload';
import { identityWarnings } from './identity-warning';
import { checksRunningAsRoot, rootRefusal } from './root-refusal';
import type { UserLookup } from './user-lookup';
import { DEFAULT_RUN_TICK_MS } from './checks-file-shape';

export interface RunChecks {
  concurrency: number | undefined;
  /** The file's `tick` in ms, if it has one. */
  tick: number | undefined;
  metrics: RunnerMetricsOptions;
  /** The file's checks by key, credentials resolved; without definitions where `applied` holds them unchanged. */
  checks: KeyedChecks;
  warnings: string[];
  /** What the next load of the file can go by: its checks' hashes (checks-known.ts). */
  known: KnownChecks;
  /** This load, as the next one can take it again if the file's bytes are the same. */
  last: LastLoad;
  /** The file's bytes were `last`'s (given): nothing was parsed, and nothing needed copying. */
  unchanged: boolean;
}

/**
 * The file's checks, credentials resolved; refused (TypeError) if any would
 * run as root unasked. `offThread`: parsed and validated on a worker thread
 * (a reload), and given `applied`, only the definitions whose key differs
 * from the applied one's are copied here; the others are left out. Given
 * `known` (what the last load learned), a check whose text and context it
 * had is neither validated nor expanded again unless copied.
 */
export async function loadRunChecks(
  file: string, allowRoot: boolean,
  load: {
    offThread?: boolean; signal?: AbortSignal | undefined; applied?: AppliedChecks; lookup?: Pick<UserLookup, 'resolve'>;
    known?: KnownChecks | null;
    /** The last load (RunChecks.last), kept: off the thread, bytes that are its bytes are not parsed again. */
    last?: LastLoad | null;
    /** false: a load that is not applied (`--check`); its checks are not hashed (loadChecks). */
    keyed?: boolean;
  } = {},
): Promise<RunChecks> {
  const { signal, applied, lookup, known = null, last = null, keyed = true } = load;
  const source = load.offThread === true ? await openChecksFileOffThread(file, signal, known, last) : localChecksSource(loadChecks(file, known, undefined, keyed));
  try {
    const stopped = () => {
      if (signal?.aborted === true) throw new LoadAborted(`${file}: load aborted`);
    };
    // Stopping meanwhile: no user lookups (they start getent) for a load that is not applied.
    stopped();
    const { digest } = source;
    // Stopped during the lookups: LoadAborted, as anywhere else in a load.
    const identities = await resolvePairs(file, digest, lookup, signal).catch((e: unknown) => {
      stopped();
      throw e;
    });
    const asRoot = allowRoot ? [] : checksRunningAsRoot(digest, identities);
    if (asRoot.length > 0) throw new TypeError(rootRefusal(file, asRoot));
    const n = digest.ids.length;
    // One string per identity, shared by its checks.
    const whoOfPair = identities.map((i) => JSON.stringify(i));
    const who = new Array<string>(n);
    for (let i = 0; i < n; i++) who[i] = whoOfPair[digest.pairOf[i]];
    const keys = { ids: digest.ids, hashes: digest.hashes, who };
    const want = applied !== undefined ? await applied.wanted(keys) : Uint32Array.from(digest.ids.keys());
    stopped();
    // Stopping during it: the thread is gone, and the fetch rejects with LoadAborted.
    const fetched = await source.fetch(want);
    const defs = new Array<KeyedChecks['defs'][number]>(n);
    for (let j = 0; j < want.length; j++) {
      // A turn of the event loop now and then: 100,000 copies with credentials held it ~190 ms in one go.
      if ((j & 2047) === 2047) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        stopped();
      }
      defs[want[j]] = withIdentity(fetched[j].definition, identities[digest.pairOf[want[j]]]);
    }
    return {
      concurrency: source.runner.concurrency, tick: source.runner.tick as number | undefined, metrics: source.metrics, checks: { ...keys, defs }, warnings: identityWarnings(file, digest),
      known: source.known, last: { runner: source.runner, metrics: source.metrics, digest, known: source.known },
      unchanged: source.unchanged && want.length === 0,
    };
  } finally {
    source.close();
  }
}

/**
 * SIGHUP: load the file again and apply it; a file that fails to load is
 * logged and the checks running now go on. One reload at a time; signals
 * during one cause one more afterwards (the file may have changed again).
 */
export function onReload(
  run: {
    file: string; allowRoot: boolean; concurrency: number | undefined; fixedConcurrency: boolean;
    /** The tick the runner has (ms), and whether --tick gave it (a file's new tick is then not news). */
    tick?: number | undefined; fixedTick?: boolean;
    /** What the load at start learned (RunChecks.known), and that load (RunChecks.last). */
    known?: KnownChecks | null;
    last?: LastLoad | null;
    /** The file's metrics options, at every reload that applied its checks. */
    metrics?: ((options: RunnerMetricsOptions) => void) | undefined;
  },
  applied: AppliedChecks, stopping: () => boolean, err: (s: string) => void,
): { remove(): void; abort(): void; now(why: string): void } {
  // Not `run` itself in the closures: it holds the start's load (`last`), kept then for as long as the process runs.
  const { file, allowRoot, concurrency, fixedConcurrency, metrics, tick, fixedTick = false } = run;
  // abort(), at the stop: a load in progress ends at once (its thread is terminated).
  const stopLoad = new AbortController();
  let busy = false;
  let again = false;
  // Kept from each load that succeeded, whether or not it was applied: a check's hashes depend on the file alone.
  let known = run.known ?? null;
  // The load applied last, whole: bytes that are its bytes again need no parse and no apply.
  let last = run.last !== undefined && run.last !== null && run.last.known === known ? run.last : null;
  const reload = async (): Promise<void> => {
    busy = true;
    do {
      again = false;
      try {
        // Off the event loop: the checks running meanwhile go on being scheduled.
        const next = await loadRunChecks(file, allowRoot, { offThread: true, signal: stopLoad.signal, applied, known, last });
        known = next.known;
        if (stopping()) break;
        // --concurrency wins over the file, as at start.
        if (!fixedConcurrency && next.concurrency !== concurrency) err(`noshell run: reload: a new concurrency takes a restart; keeping ${concurrency ?? 'the default'}\n`);
        if (tick !== undefined && !fixedTick && (next.tick ?? DEFAULT_RUN_TICK_MS) !== tick) err(`noshell run: reload: a new tick takes a restart; keeping ${tick === 0 ? 'none (0)' : `${tick} ms`}\n`);
        for (const w of next.warnings) err(`noshell run: ${w}\n`);
        // The bytes applied last, and every check's identity as it was: what is applied is what the file says.
        const r = next.unchanged ? { added: [], removed: [], changed: [], unchanged: next.checks.ids.length } : await applied.applyInSlices(next.checks, stopping);
        if (stopping()) break;
        last = next.last;
        metrics?.(next.metrics);
        // Ids come from the file: quoted, cut, and at most ten of them on the line.
        const list = (ids: string[]) => (ids.length > 0 ? ` (${ids.slice(0, 10).map(quoteName).join(', ')}${ids.length > 10 ? ', …' : ''})` : '');
        err(`noshell run: reloaded ${file}: ${r.added.length} added${list(r.added)}, ${r.removed.length} removed${list(r.removed)}, ` +
          `${r.changed.length} changed${list(r.changed)}, ${r.unchanged} unchanged\n`);
      } catch (e) {
        if (e instanceof LoadAborted || stopping()) break;
        // Two texts with one hash (nothing was applied): once more, validating every check.
        if (e instanceof StaleKnown && known !== null) {
          known = null;
          last = null;
          again = true;
          err(`noshell run: reload of ${file}: ${e.message}; loading it again in full\n`);
          continue;
        }
        err(`noshell run: reload of ${file} failed, the running checks go on:\n${(e as Error).message}\n`);
      }
    } while (again && !stopping());
    busy = false;
  };
  const now = (why: string) => {
    if (stopping()) return;
    err(`noshell run: ${why}, reloading\n`);
    if (busy) again = true;
    else void reload();
  };
  const handler = () => now('SIGHUP');
  process.on('SIGHUP', handler);
  return { remove: () => process.off('SIGHUP', handler), abort: () => stopLoad.abort(), now };
}
