/* The lock around every read of environ (issue 17). Other threads may change
 * environ while we read it (a Worker with env: SHARE_ENV sets process.env;
 * glibc's setenv reallocates environ's array and unsetenv shifts its entries
 * in place); they do so holding a lock, which the glue names here once
 * (Node's env_var_mutex, inherited-env.cc). Plain C, with libuv's mutex. */
#ifndef NOSHELL_ENV_LOCK_H_
#define NOSHELL_ENV_LOCK_H_

#include <stddef.h>
#include <uv.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The mutex every thread that changes environ holds while it does; NULL:
 * none. Set before any thread reads environ through this file. */
void noshell_env_set_lock(uv_mutex_t* lock);

/* Whether a lock was set. */
int noshell_env_locked(void);

/* Takes the lock if one is set; returns what noshell_env_unlock takes.
 * It is not recursive: hold it only around reads of environ, malloc and
 * string copies, never around anything that could take it again. */
uv_mutex_t* noshell_env_lock(void);
void noshell_env_unlock(uv_mutex_t* held);

/* getenv(name) copied into buf (cut to len - 1 bytes), under the lock:
 * getenv walks environ too, and its answer points into it. 0 when set, -1
 * when not. */
int noshell_env_get(const char* name, char* buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* NOSHELL_ENV_LOCK_H_ */
