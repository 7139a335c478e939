#define _GNU_SOURCE
#include "env-snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "env-lock.h"

extern char** environ;

static void snapshot_free(noshell_env_snapshot_t* snap) {
  for (size_t i = 0; i < snap->count; i++) free(snap->envp[i]);
  free(snap->envp);
  free(snap);
}

/* Whether environ holds exactly the snapshot's strings, in its order. */
static int matches(const noshell_env_snapshot_t* snap) {
  char** env = environ;
  if (env == NULL) return snap->count == 0;
  for (size_t i = 0; i < snap->count; i++) {
    if (env[i] == NULL || strcmp(env[i], snap->envp[i]) != 0) return 0;
  }
  return env[snap->count] == NULL;
}

static noshell_env_snapshot_t* snapshot_take(void) {
  char** env = environ;
  size_t n = 0;
  while (env != NULL && env[n] != NULL) n++;
  noshell_env_snapshot_t* snap = calloc(1, sizeof(*snap));
  if (snap == NULL) return NULL;
  snap->envp = calloc(n + 1, sizeof(char*));
  if (snap->envp == NULL) {
    free(snap);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    snap->envp[i] = strdup(env[i]);
    if (snap->envp[i] == NULL) {
      snapshot_free(snap);
      return NULL;
    }
    snap->count = i + 1;
    if (snap->path == NULL && strncmp(env[i], "PATH=", 5) == 0) snap->path = snap->envp[i] + 5;
  }
  snap->refs = 1;
  return snap;
}

noshell_env_snapshot_t* noshell_env_snapshot_current(noshell_env_snapshot_t** cache) {
  noshell_env_snapshot_t* stale = NULL;
  /* Held for the compare, or the count and copy, only. */
  uv_mutex_t* held = noshell_env_lock();
  noshell_env_snapshot_t* snap = *cache;
  if (snap == NULL || !matches(snap)) {
    snap = snapshot_take();
    if (snap != NULL) {
      stale = *cache;
      *cache = snap; /* the cache's reference */
    }
  }
  /* Taken before the unlock: another thread may replace *cache and drop
   * the cache's reference right after. */
  if (snap != NULL) __atomic_add_fetch(&snap->refs, 1, __ATOMIC_RELAXED);
  noshell_env_unlock(held);
  /* Freeing touches no environ string: outside the critical section. */
  noshell_env_snapshot_release(stale);
  return snap;
}

void noshell_env_snapshot_release(noshell_env_snapshot_t* snap) {
  if (snap == NULL) return;
  if (__atomic_sub_fetch(&snap->refs, 1, __ATOMIC_ACQ_REL) == 0) snapshot_free(snap);
}
