// What `noshell run` does with its checks file: load it whole (schema,
// macros, user lookup, root refusal), at start and again on SIGHUP.
import type { CheckDefinition } from '../check/definition';
import type { RunnerMetricsOptions } from '../check/metrics-state';
import { quoteName } from '../quote-text';
import { loadChecksFile, resolveChecks } from './checks-file';
import { LoadAborted, loadChecksFileOffThread } from './checks-file-thread';
import type { AppliedChecks } from './checks-reload';
import { identityWarnings } from './identity-warning';
import { checksRunningAsRoot, rootRefusal } from './root-refusal';

/** The file's checks, credentials resolved; refused (TypeError) if any would run as root unasked. */
export async function loadRunChecks(
  file: string, allowRoot: boolean, offThread = false, signal?: AbortSignal,
): Promise<{ concurrency: number | undefined; metrics: RunnerMetricsOptions; defs: CheckDefinition[]; warnings: string[] }> {
  const loaded = offThread ? await loadChecksFileOffThread(file, signal) : loadChecksFile(file);
  // Stopping meanwhile: no user lookups (they start getent) for a load that is not applied.
  if (signal?.aborted === true) throw new LoadAborted(`${file}: load aborted`);
  const defs = await resolveChecks(file, loaded);
  const asRoot = allowRoot ? [] : checksRunningAsRoot(defs);
  if (asRoot.length > 0) throw new TypeError(rootRefusal(file, asRoot));
  return { concurrency: loaded.runner.concurrency, metrics: loaded.metrics, defs, warnings: identityWarnings(file, loaded.checks) };
}

/**
 * SIGHUP: load the file again and apply it; a file that fails to load is
 * logged and the checks running now go on. One reload at a time; signals
 * during one cause one more afterwards (the file may have changed again).
 */
export function onReload(
  run: {
    file: string; allowRoot: boolean; concurrency: number | undefined; fixedConcurrency: boolean;
    /** The file's metrics options, at every reload that applied its checks. */
    metrics?: ((options: RunnerMetricsOptions) => void) | undefined;
  },
  applied: AppliedChecks, stopping: () => boolean, err: (s: string) => void,
): { remove(): void; abort(): void } {
  const { file, allowRoot, concurrency } = run;
  // abort(), at the stop: a load in progress ends at once (its thread is terminated).
  const stopLoad = new AbortController();
  let busy = false;
  let again = false;
  const reload = async (): Promise<void> => {
    busy = true;
    do {
      again = false;
      try {
        // Off the event loop: the checks running meanwhile go on being scheduled.
        const next = await loadRunChecks(file, allowRoot, true, stopLoad.signal);
        if (stopping()) break;
        // --concurrency wins over the file, as at start.
        if (!run.fixedConcurrency && next.concurrency !== concurrency) err(`noshell run: reload: a new concurrency takes a restart; keeping ${concurrency ?? 'the default'}\n`);
        for (const w of next.warnings) err(`noshell run: ${w}\n`);
        const r = await applied.applyInSlices(next.defs, stopping);
        if (stopping()) break;
        run.metrics?.(next.metrics);
        // Ids come from the file: quoted, cut, and at most ten of them on the line.
        const list = (ids: string[]) => (ids.length > 0 ? ` (${ids.slice(0, 10).map(quoteName).join(', ')}${ids.length > 10 ? ', …' : ''})` : '');
        err(`noshell run: reloaded ${file}: ${r.added.length} added${list(r.added)}, ${r.removed.length} removed${list(r.removed)}, ` +
          `${r.changed.length} changed${list(r.changed)}, ${r.unchanged} unchanged\n`);
      } catch (e) {
        if (e instanceof LoadAborted || stopping()) break;
        err(`noshell run: reload of ${file} failed, the running checks go on:\n${(e as Error).message}\n`);
      }
    } while (again && !stopping());
    busy = false;
  };
  const handler = () => {
    if (stopping()) return;
    err('noshell run: SIGHUP, reloading\n');
    if (busy) again = true;
    else void reload();
  };
  process.on('SIGHUP', handler);
  return { remove: () => process.off('SIGHUP', handler), abort: () => stopLoad.abort() };
}
