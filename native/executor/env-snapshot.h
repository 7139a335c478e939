/* The inherited environment of an exec, copied once and shared (issue 11).
 *
 * An exec that inherits the environment must see environ as it was when it
 * was submitted, not as it is when the executor thread gets to it. Copying
 * environ per exec cost ~70 malloc/free pairs on the Node thread; instead a
 * snapshot is cached and reused while environ still holds the same strings
 * (compared by content, so any setenv, unsetenv, putenv or in-place change
 * is seen). Snapshots are immutable and
 * reference-counted: a job holds one, and whichever thread frees the job
 * drops it. Every walk of environ holds the lock of env-lock.h. Plain C. */
#ifndef NOSHELL_ENV_SNAPSHOT_H_
#define NOSHELL_ENV_SNAPSHOT_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct noshell_env_snapshot {
  char** envp;        /* NULL-terminated copies of environ's strings */
  const char* path;   /* the value of the first PATH= entry, or NULL */
  size_t count;
  unsigned long refs; /* atomic */
} noshell_env_snapshot_t;

/* A reference to a snapshot equal to environ now: *cache if environ still
 * matches it, else a fresh one, which then replaces *cache. With a lock set
 * (env-lock.h),
 * the compare, the copy and *cache are all under it: any thread may call
 * this with the same cache. Without one, the cache belongs to the calling
 * thread, which must also be the only thread changing environ meanwhile (as
 * for any getenv). NULL when out of memory. */
noshell_env_snapshot_t* noshell_env_snapshot_current(noshell_env_snapshot_t** cache);

/* Drops one reference (any thread); the last one frees it. NULL is ignored. */
void noshell_env_snapshot_release(noshell_env_snapshot_t* snap);

#ifdef __cplusplus
}
#endif

#endif /* NOSHELL_ENV_SNAPSHOT_H_ */
