#define _GNU_SOURCE
#include "env-lock.h"

#include <stdlib.h>
#include <string.h>

/* Written once before any read of environ (the glue's uv_once), read after. */
static uv_mutex_t* env_lock;

void noshell_env_set_lock(uv_mutex_t* lock) {
  __atomic_store_n(&env_lock, lock, __ATOMIC_RELEASE);
}

int noshell_env_locked(void) {
  return __atomic_load_n(&env_lock, __ATOMIC_ACQUIRE) != NULL;
}

uv_mutex_t* noshell_env_lock(void) {
  uv_mutex_t* lock = __atomic_load_n(&env_lock, __ATOMIC_ACQUIRE);
  if (lock != NULL) uv_mutex_lock(lock);
  return lock;
}

void noshell_env_unlock(uv_mutex_t* held) {
  if (held != NULL) uv_mutex_unlock(held);
}

int noshell_env_get(const char* name, char* buf, size_t len) {
  uv_mutex_t* held = noshell_env_lock();
  const char* v = getenv(name);
  if (v != NULL && len > 0) {
    size_t n = strnlen(v, len - 1);
    memcpy(buf, v, n);
    buf[n] = '\0';
  }
  noshell_env_unlock(held);
  return v != NULL ? 0 : -1;
}
