// A loaded checks file as a reload uses it (ChecksSource): its settings and
// digest at once, the definitions on request. Loaded on this thread
// (localChecksSource), on the loading thread (checks-file-thread.ts), or the
// last load again when the file's bytes are its bytes (unchangedSource).
import { badIndexes, type ChecksDigest } from './checks-digest';
import type { ChecksFile, FileCheck } from './checks-file-shape';
import type { LoadedChecks } from './checks-file-load';
import { StaleKnown, type KnownChecks } from './checks-known';

/** A loaded file: its settings and digest now, definitions on request. */
export interface ChecksSource {
  runner: ChecksFile['runner'];
  metrics: ChecksFile['metrics'];
  digest: ChecksDigest;
  /** What the next load of the file can go by (checks-known.ts). */
  known: KnownChecks;
  /** How many checks the load knew from the last one, and neither validated nor expanded. */
  skipped: number;
  /**
   * The file's bytes were those of the last load (`last`), and this is that
   * load's digest: nothing was parsed. Its fetch gives no definitions; one
   * asking for any rejects with StaleKnown (a full load can answer it).
   */
  unchanged: boolean;
  /** The file's checks at `indexes` (ascending, each at most once), in that order. Once per source. */
  fetch(indexes: Uint32Array): Promise<FileCheck[]>;
  /** Done with it: the thread, if any, is terminated (a fetch under way rejects with LoadAborted). */
  close(): void;
}

/** The reason a load aborted by its signal rejects with. */
export class LoadAborted extends Error {}

/** What is kept of a load on this thread, for a reload that reads the same bytes again. */
export type LastLoad = Pick<ChecksSource, 'runner' | 'metrics' | 'digest' | 'known'>;

/**
 * The last load again, for bytes that are its bytes. Definitions asked for
 * (checks with no key, or whose user's identity changed) come from a load of
 * the file now, if its bytes are still those; else StaleKnown (the file
 * changed meanwhile: a full load can answer).
 */
export function unchangedSource(file: string, last: LastLoad, reopen: () => Promise<ChecksSource>): ChecksSource {
  let fetched = false;
  let closed = false;
  let again: ChecksSource | null = null;
  return {
    ...last,
    skipped: last.digest.ids.length,
    unchanged: true,
    async fetch(indexes) {
      if (fetched) throw new Error('fetch: once per source');
      fetched = true;
      const bad = badIndexes(indexes, last.digest.ids.length);
      if (bad !== null) throw new Error(bad);
      if (indexes.length === 0) return [];
      if (closed) throw new LoadAborted(`${file}: load aborted`);
      again = await reopen();
      try {
        if (closed) throw new LoadAborted(`${file}: load aborted`);
        if (again.known.file !== last.known.file) throw new StaleKnown(`${file}: it changed while it was being reloaded`);
        return await again.fetch(indexes);
      } finally {
        again.close();
      }
    },
    close() {
      closed = true;
      again?.close();
    },
  };
}

/** A file loaded on this thread as a source. */
export function localChecksSource(loaded: LoadedChecks): ChecksSource {
  let fetched = false;
  return {
    runner: loaded.runner,
    metrics: loaded.metrics,
    digest: loaded.digest,
    known: loaded.known,
    skipped: loaded.skipped,
    unchanged: false,
    fetch(indexes) {
      if (fetched) return Promise.reject(new Error('fetch: once per source'));
      fetched = true;
      const bad = badIndexes(indexes, loaded.digest.ids.length);
      if (bad !== null) return Promise.reject(new Error(bad));
      try {
        return Promise.resolve(Array.from(indexes, (i) => loaded.check(i)));
      } catch (e) {
        return Promise.reject(e);
      }
    },
    close() {},
  };
}

