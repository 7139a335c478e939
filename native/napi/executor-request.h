// Turning execSubmit's arguments into an executor job (executor-request.cc).
#ifndef NOSHELL_EXECUTOR_REQUEST_H_
#define NOSHELL_EXECUTOR_REQUEST_H_

#include <napi.h>

#include "../executor/executor.h"

namespace noshell {

// execSubmit(file, argv, envp|null, searchPath|null, cwd|null,
//   stdio: Int32Array(6), flags, uid, gid, method, groups: Uint32Array|null,
//   capture, maxBuffer, input: Uint8Array|null, timeoutMs, killSignal,
//   forceKillAfterMs, killGroup: boolean, ref: boolean, setup: Float64Array|null,
//   cgroup: string|null, outputGraceMs (-1: read output to its end))
// Everything is copied: the job owns its strings, its environment (when
// envp is null: a reference to the snapshot of environ as it is now, see
// inherited-env.h), its input bytes and a dup of every caller fd. Returns 0 with *job set; an
// errno (> 0) when a caller's fd cannot be dup'd; -1 with a TypeError
// pending for bad arguments or no memory.
int BuildJob(const Napi::CallbackInfo& info, noshell_job_t** job, bool* ref);

}  // namespace noshell

#endif  // NOSHELL_EXECUTOR_REQUEST_H_
