// What the executor's N-API glue keeps per Node environment, shared by
// executor-addon.cc (start, submit, cancel, teardown) and
// executor-results.cc (handing finished jobs to JS).
#ifndef NOSHELL_EXECUTOR_ENV_H_
#define NOSHELL_EXECUTOR_ENV_H_

#include <node_api.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "../executor/executor.h"

namespace noshell {

// Executor threads per environment at most. A spawn holds its thread until
// the child has exec'd (the vfork wait), longer when the machine is busy:
// two threads overlap those waits (measured: one thread saturated at ~87 %
// of the CPU-bound check rate on 2 cores).
constexpr int kMaxExecutors = 4;

struct ExecEnv {
  napi_env env = nullptr;
  noshell_executor_t* ex[kMaxExecutors] = {};
  int nex = 0;
  uv_async_t async;
  napi_ref on_results = nullptr;
  napi_async_context context = nullptr;
  napi_async_cleanup_hook_handle cleanup = nullptr;
  uint64_t refs = 0;  // jobs in flight that keep the loop alive
  bool async_refd = true;
  // The Float64Array onResults gets, reused from batch to batch (JS reads
  // it during the call only): a fresh ArrayBuffer per wake-up cost ~5 us.
  napi_ref numbers = nullptr;
  double* numbers_data = nullptr;
  size_t numbers_jobs = 0;  // room for this many jobs
};

// Keeps the loop alive while e->refs > 0 (ref'd jobs in flight).
void UpdateRef(ExecEnv* e);
// The uv_async_t callback: every finished job to onResults, in one call.
void OnResultsReady(uv_async_t* handle);
// Drops the reused result array (teardown).
void ReleaseResultArray(ExecEnv* e);
// Numbers per finished job (ExecField in binding.ts).
constexpr uint32_t kResultNumbers = 12;
// One finished job's numbers into d[0 … kResultNumbers) and its outputs into
// outputs[at … at + 3) (executor-results.cc).
void PutResult(napi_env env, double* d, napi_value outputs, uint32_t at, noshell_job_t* job);

}  // namespace noshell

#endif  // NOSHELL_EXECUTOR_ENV_H_
