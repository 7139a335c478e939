// The child's settings beyond stdio and credentials (session, death signal,
// nice, group to join, cgroup, resource limits, redirections), read from the
// typed request binding.ts builds: setup is a Float64Array [deathSignal,
// nice, pgid, n, (resource, soft, hard) × n] (soft/hard: -1 unlimited, -2
// keep the inherited value) or null; cgroup a string or null; redirects an
// array [fd, kind, oflags, src, path | null] × m (spawn.h's
// noshell_redirect_t) or null. The flags that enable them travel in the
// request's flags.
#ifndef NOSHELL_CHILD_SETUP_H_
#define NOSHELL_CHILD_SETUP_H_

#include <napi.h>

#include "../core/spawn.h"

namespace noshell {

// What LoadChildSetup allocates: req points into it. Freed by the caller
// (FreeChildSetup), or handed to a job.
struct ChildSetupMemory {
  noshell_rlimit_t* rlimits = nullptr;
  char* cgroup = nullptr;
  noshell_redirect_t* redirects = nullptr;  // one block: the entries, then their paths
};

void FreeChildSetup(ChildSetupMemory* m);

// Fills req's death_signal, nice, pgid, rlimits/nrlimits, cgroup and
// redirects/nredirects. False with a TypeError thrown on a bad shape or out
// of memory (nothing left to free).
bool LoadChildSetup(Napi::Env env, const Napi::Value& setup, const Napi::Value& cgroup,
                    const Napi::Value& redirects, noshell_spawn_t* req, ChildSetupMemory* out);

}  // namespace noshell

#endif  // NOSHELL_CHILD_SETUP_H_
