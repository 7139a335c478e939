// glibc's mmap threshold for a long-running command (issue 19). By default
// glibc raises the threshold to the size of each mapped block freed (up to
// 32 MiB), so later blocks of a few MiB (a scrape's columns, chunks past the
// pool) come from the heap, and one freed between blocks still in use stays
// resident. `noshell run` at 100,000 checks, every check reported and
// scraped three times, held 61 MiB of heap of which malloc_trim() gave back
// 23; with the threshold fixed at 1 MiB its RSS was 337 MiB against 380.
// Process-wide, so it is set by commands that own their process (never by
// the library on load), and not where the environment sets it already.
import { binding } from './binding';

/** What `noshell run` fixes it at: its scrape chunks are 1 MiB (pooled), its columns MiB each at 100,000 checks. */
export const RUN_MMAP_THRESHOLD = 1024 * 1024;

/** Whether the environment sets glibc's threshold (GLIBC_TUNABLES' glibc.malloc.mmap_threshold, or MALLOC_MMAP_THRESHOLD_). */
export function envSetsMmapThreshold(env: NodeJS.ProcessEnv): boolean {
  if (env.MALLOC_MMAP_THRESHOLD_ !== undefined) return true;
  // name=value pairs separated by colons.
  return (env.GLIBC_TUNABLES ?? '').split(':').some((pair) => pair.startsWith('glibc.malloc.mmap_threshold='));
}

/** Fixes glibc's threshold at `bytes` unless the environment sets it; true when it was set here (false too without glibc). */
export function fixMmapThreshold(bytes = RUN_MMAP_THRESHOLD, env: NodeJS.ProcessEnv = process.env): boolean {
  if (envSetsMmapThreshold(env)) return false;
  return binding.mmapThreshold(bytes);
}
