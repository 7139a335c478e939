// The child's settings beyond stdio and credentials (session, death signal,
// nice, cgroup, resource limits), read from the typed request binding.ts
// builds: setup is a Float64Array [deathSignal, nice, n, (resource, soft,
// hard) × n] (soft/hard: -1 unlimited, -2 keep the inherited value) or
// null; cgroup a string or null. The flags that enable them travel in the
// request's flags.
#ifndef NOSHELL_CHILD_SETUP_H_
#define NOSHELL_CHILD_SETUP_H_

#include <napi.h>

#include "../core/spawn.h"

namespace noshell {

// Fills req's death_signal, nice, rlimits/nrlimits and cgroup. *rlimits and
// *cgroup receive malloc'd memory req points into (the caller frees it, or
// hands it to a job); both NULL when not given. False with a TypeError
// thrown on a bad shape or out of memory (nothing left to free).
bool LoadChildSetup(Napi::Env env, const Napi::Value& setup, const Napi::Value& cgroup,
                    noshell_spawn_t* req, noshell_rlimit_t** rlimits, char** cgroup_copy);

}  // namespace noshell

#endif  // NOSHELL_CHILD_SETUP_H_
