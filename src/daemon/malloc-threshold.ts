// glibc's mmap threshold for a long-running command (issue 19). By default
// glibc raises the threshold to the size of each mapped block freed (up to
// 32 MiB), so later blocks of a few MiB (a scrape's columns, chunks past the
// pool) come from the heap, and one freed between blocks still in use stays
// resident. `noshell run` at 100,000 checks, every check reported and
// scraped three times, held 61 MiB of heap of which malloc_trim() gave back
// 23; with the threshold fixed at 1 MiB its RSS was 337 MiB against 380.
// `noshell gearman-worker` after rounds of job packets of 1 KiB to 16 MiB:
// RSS 77-138 MiB (median 120) with it, 130-194 (median 150) without.
// Process-wide, so it is set by commands that own their process (never by
// the library on load), and not where the environment tunes it already.
import { binding } from '../binding/binding';

/** What `noshell run` and `noshell gearman-worker` fix it at: run's scrape chunks are 1 MiB (pooled), its columns MiB each at 100,000 checks. */
export const RUN_MMAP_THRESHOLD = 1024 * 1024;

/**
 * glibc's settings from the environment that fix its threshold: the
 * threshold itself, and the three that freeze it at its default (128 KiB)
 * when set. Old-style variables (a trailing underscore) and tunables.
 */
const FIXING_VARS = ['MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_', 'MALLOC_TOP_PAD_', 'MALLOC_MMAP_MAX_'];
const FIXING_TUNABLES = ['glibc.malloc.mmap_threshold=', 'glibc.malloc.trim_threshold=', 'glibc.malloc.top_pad=', 'glibc.malloc.mmap_max='];

/** Whether the environment fixes glibc's threshold (FIXING_VARS, or one of FIXING_TUNABLES in GLIBC_TUNABLES): then it is the user's. */
export function envSetsMmapThreshold(env: NodeJS.ProcessEnv): boolean {
  if (FIXING_VARS.some((v) => env[v] !== undefined)) return true;
  // name=value pairs separated by colons.
  return (env.GLIBC_TUNABLES ?? '').split(':').some((pair) => FIXING_TUNABLES.some((t) => pair.startsWith(t)));
}

/** Fixes glibc's threshold at `bytes` unless the environment sets it; true when it was set here (false too without glibc). */
export function fixMmapThreshold(bytes = RUN_MMAP_THRESHOLD, env: NodeJS.ProcessEnv = process.env): boolean {
  if (envSetsMmapThreshold(env)) return false;
  return binding.mmapThreshold(bytes);
}
