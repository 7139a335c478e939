// Node changes environ (process.env.X = …, delete process.env.X, from any
// thread: a Worker with env: SHARE_ENV shares it) only while it holds
// node::per_process::env_var_mutex, and reads it under the same lock. A walk
// of environ without that lock crashed (issue 17: strdup(NULL) while a
// worker's setenv reallocated the array) or handed the child a torn array
// (EFAULT at execve). Node exports the lock's symbol; it is a node::Mutex,
// whose only member is a uv_mutex_t, locked with uv_mutex_lock in every
// line checked (20.20, 22.23, 24.22, 26.12: RealEnvStore's Get, Set,
// Delete, Query and Enumerate, and no other kind of call on it).
//
// Where the symbol is missing (an embedder that hides Node's symbols, like
// Electron may), or is not the size of a uv_mutex_t (a later Node that made
// it something else), no lock is taken: then nothing here walks environ for
// a child and JS copies process.env, under Node's lock, into an explicit
// envp for every spawn, as Node's child_process does (src/process/env.ts).
// That costs the per-exec copy the shared snapshot saves, and only there.
#include "inherited-env.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <uv.h>

namespace noshell {
namespace {

const char kEnvLockSymbol[] = "_ZN4node11per_process13env_var_mutexE";

uv_once_t lock_once = UV_ONCE_INIT;

// Guarded by Node's lock (env-snapshot.h, env-lock.h): one snapshot for every thread.
noshell_env_snapshot_t* shared_cache = nullptr;

using Dladdr1 = int (*)(const void*, Dl_info*, void**, int);

// Node's lock, or nullptr. Looked up in the process's global scope (the
// node executable, or a libnode it links); dladdr1 (libc since glibc 2.34,
// libdl before, looked up the same way to need no newer glibc) gives its
// size when the symbol table has it.
uv_mutex_t* FindNodeEnvLock() {
  uv_lib_t self;
  if (uv_dlopen(nullptr, &self) != 0) return nullptr;
  void* lock = nullptr;
  void* dladdr1_ptr = nullptr;
  if (uv_dlsym(&self, kEnvLockSymbol, &lock) != 0) lock = nullptr;
  if (lock != nullptr && uv_dlsym(&self, "dladdr1", &dladdr1_ptr) == 0) {
    Dl_info info;
    void* extra = nullptr;
    if (reinterpret_cast<Dladdr1>(dladdr1_ptr)(lock, &info, &extra, RTLD_DL_SYMENT) != 0 &&
        extra != nullptr && static_cast<const ElfW(Sym)*>(extra)->st_size != sizeof(uv_mutex_t))
      lock = nullptr;
  }
  uv_dlclose(&self);  // the executable stays loaded
  return static_cast<uv_mutex_t*>(lock);
}

void ResolveEnvLock() {
  noshell_env_set_lock(FindNodeEnvLock());
  // For the tests of the copy JS makes without the lock; read under it.
  if (EnvFlag("NOSHELL_NO_ENV_LOCK")) noshell_env_set_lock(nullptr);
}

}  // namespace

void InitEnvLock() { uv_once(&lock_once, ResolveEnvLock); }

bool EnvLocked() { return noshell_env_locked() != 0; }

noshell_env_snapshot_t* InheritedEnv() {
  if (EnvLocked()) return noshell_env_snapshot_current(&shared_cache);
  // No lock: no cache either, as none could be shared between threads.
  noshell_env_snapshot_t* own = nullptr;
  noshell_env_snapshot_t* snap = noshell_env_snapshot_current(&own);
  noshell_env_snapshot_release(own);
  return snap;
}

bool EnvFlag(const char* name) {
  char v[16];
  return noshell_env_get(name, v, sizeof(v)) == 0 && v[0] != '\0' && strcmp(v, "0") != 0;
}

}  // namespace noshell
