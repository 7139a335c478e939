// The environment a child inherits, for the glue (inherited-env.cc): Node's
// own environment lock found once, and the snapshot of environ that spawns
// and execs without an env option hand their child.
#ifndef NOSHELL_INHERITED_ENV_H_
#define NOSHELL_INHERITED_ENV_H_

#include "../executor/env-lock.h"
#include "../executor/env-snapshot.h"

namespace noshell {

// Finds Node's lock (once per process); call before anything reads environ.
void InitEnvLock();

// Whether environ is walked under Node's lock. false: JS must hand every
// child an explicit copy of process.env (src/process/env.ts).
bool EnvLocked();

// A reference to a snapshot of environ now (release it when the child has
// been started); nullptr when out of memory.
noshell_env_snapshot_t* InheritedEnv();

// Holds one reference for a scope.
struct EnvSnapshotRef {
  noshell_env_snapshot_t* snap = nullptr;
  EnvSnapshotRef() = default;
  EnvSnapshotRef(const EnvSnapshotRef&) = delete;
  EnvSnapshotRef& operator=(const EnvSnapshotRef&) = delete;
  ~EnvSnapshotRef() { noshell_env_snapshot_release(snap); }
};

// Whether `name` is set to something other than "" or "0".
bool EnvFlag(const char* name);

}  // namespace noshell

#endif  // NOSHELL_INHERITED_ENV_H_
