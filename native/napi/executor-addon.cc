// The executor's N-API glue. JS calls execInit(onResults) once, then
// execSubmit(...) per exec: the request is copied into a job (strings, the
// environment, input bytes, dup'd caller fds) and queued; the executor
// thread does the rest. Finished jobs come back through one uv_async_t
// (executor-results.cc).
#include "executor-addon.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "../executor/env-lock.h"
#include "executor-env.h"
#include "executor-request.h"
#include "watch-internal.h"

namespace noshell {
namespace {

void Notify(void* arg) {
  uv_async_send(&static_cast<ExecEnv*>(arg)->async);
}

void ReapLaterC(pid_t pid) { ReapLater(pid); }

void OnAsyncClosed(uv_handle_t* handle) {
  ExecEnv* e = static_cast<ExecEnv*>(handle->data);
  napi_remove_async_cleanup_hook(e->cleanup);
  delete e;
}

// Environment teardown (process exit, worker termination): stop and join
// the thread (children still running are reaped in the background, not
// killed, as with spawn()), call no JS, free the rest.
void Cleanup(napi_async_cleanup_hook_handle handle, void* arg) {
  ExecEnv* e = static_cast<ExecEnv*>(arg);
  e->cleanup = handle;
  for (int i = 0; i < e->nex; i++) noshell_executor_stop(e->ex[i]);
  e->nex = 0;
  if (e->on_results != nullptr) napi_delete_reference(e->env, e->on_results);
  if (e->context != nullptr) napi_async_destroy(e->env, e->context);
  ReleaseResultArray(e);
  e->on_results = nullptr;
  e->context = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(&e->async), OnAsyncClosed);
}

// NOSHELL_EXECUTOR_THREADS (1-4), else 2 where there are 2 or more CPUs.
int ExecutorThreads() {
  char v[4];
  if (noshell_env_get("NOSHELL_EXECUTOR_THREADS", v, sizeof(v)) == 0 && v[0] >= '1' &&
      v[0] <= '0' + kMaxExecutors && v[1] == '\0')
    return v[0] - '0';
  return sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;
}

ExecEnv* GetExecEnv(napi_env env) {
  void* data = nullptr;
  if (napi_get_instance_data(env, &data) != napi_ok) return nullptr;
  return static_cast<ExecEnv*>(data);
}

void ThrowErrno(Napi::Env env, const char* what, int err) {
  char message[256];
  snprintf(message, sizeof(message), "%s: %s", what, strerror(err));
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("errno", Napi::Number::New(env, -err));
  e.ThrowAsJavaScriptException();
}

// BuildJob, or in *failed what the call returns for its failure: a negative
// errno (a caller's fd could not be taken), or empty with a TypeError pending.
bool BuildOrFail(const Napi::CallbackInfo& info, noshell_job_t** job, bool* ref, Napi::Value* failed) {
  int err = BuildJob(info, job, ref);
  if (err == 0) return true;
  *failed = err > 0 ? Napi::Number::New(info.Env(), -err) : Napi::Value();
  return false;
}

}  // namespace

void UpdateRef(ExecEnv* e) {
  bool want = e->refs > 0;
  if (want == e->async_refd) return;
  e->async_refd = want;
  if (want)
    uv_ref(reinterpret_cast<uv_handle_t*>(&e->async));
  else
    uv_unref(reinterpret_cast<uv_handle_t*>(&e->async));
}

// execInit(onResults(numbers: Float64Array, outputs: unknown[], room: boolean))
// -> undefined. numbers is the same array every call, valid during it only.
// Starts this environment's executor; a second call is a no-op.
Napi::Value ExecInit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsFunction()) {
    Napi::TypeError::New(env, "noshell: execInit(onResults)").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  if (GetExecEnv(env) != nullptr) return env.Undefined();
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok) {
    ThrowErrno(env, "noshell: no event loop for the executor", EINVAL);
    return Napi::Value();
  }
  ExecEnv* e = new (std::nothrow) ExecEnv();
  if (e == nullptr) {
    ThrowErrno(env, "noshell: executor", ENOMEM);
    return Napi::Value();
  }
  e->env = env;
  int err = uv_async_init(loop, &e->async, OnResultsReady);
  if (err != 0) {
    delete e;
    ThrowErrno(env, "noshell: executor wake-up handle", -err);
    return Napi::Value();
  }
  e->async.data = e;
  e->async_refd = true;
  UpdateRef(e);  // nothing in flight yet
  noshell_executor_options_t opts;
  memset(&opts, 0, sizeof(opts));
  opts.notify = Notify;
  opts.notify_arg = e;
  opts.reap_later = ReapLaterC;
  opts.queue_limit = 1024;
  int want = ExecutorThreads();
  err = noshell_executor_start(&opts, &e->ex[0]);
  if (err == 0) e->nex = 1;
  // More threads are a help, not a need: fewer start if fewer can.
  while (err == 0 && e->nex < want && noshell_executor_start(&opts, &e->ex[e->nex]) == 0) e->nex++;
  napi_value name;
  if (err == 0) {
    napi_create_string_utf8(env, "noshell.exec", NAPI_AUTO_LENGTH, &name);
    if (napi_create_reference(env, info[0], 1, &e->on_results) != napi_ok ||
        napi_async_init(env, nullptr, name, &e->context) != napi_ok ||
        napi_add_async_cleanup_hook(env, Cleanup, e, &e->cleanup) != napi_ok ||
        napi_set_instance_data(env, e, nullptr, nullptr) != napi_ok) {
      err = ENOMEM;
      for (int i = 0; i < e->nex; i++) noshell_executor_stop(e->ex[i]);
      e->nex = 0;
      if (e->cleanup != nullptr) napi_remove_async_cleanup_hook(e->cleanup);
      e->cleanup = nullptr;
      if (e->on_results != nullptr) napi_delete_reference(env, e->on_results);
      if (e->context != nullptr) napi_async_destroy(env, e->context);
    }
  }
  if (err != 0) {
    // The handle closes on the loop; the struct goes with it.
    uv_close(reinterpret_cast<uv_handle_t*>(&e->async),
             [](uv_handle_t* h) { delete static_cast<ExecEnv*>(h->data); });
    ThrowErrno(env, "noshell: cannot start the executor thread", err);
    return Napi::Value();
  }
  return env.Undefined();
}

// execSubmit(...request, see executor-request.h) -> job id (> 0); 0 when
// the queue is full (submit again after onResults(_, room = true)); a
// negative errno when a caller's fd could not be taken (step 'stdio').
Napi::Value ExecSubmit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ExecEnv* e = GetExecEnv(env);
  if (e == nullptr || e->nex == 0) {
    Napi::Error::New(env, "noshell: execSubmit before execInit").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  noshell_job_t* job = nullptr;
  bool ref = false;
  Napi::Value failed;
  if (!BuildOrFail(info, &job, &ref, &failed)) return failed;
  job->user = ref ? job : nullptr;  // non-null: keeps the loop alive
  // The least loaded thread (one at a time: always the first).
  int pick = 0;
  uint64_t least = UINT64_MAX;
  for (int i = 0; i < e->nex; i++) {
    noshell_executor_stats_t st;
    noshell_executor_stats(e->ex[i], &st);
    if (st.queued + st.running < least) {
      least = st.queued + st.running;
      pick = i;
    }
  }
  uint64_t id = 0;
  int err = noshell_executor_submit(e->ex[pick], job, &id);
  id = id * kMaxExecutors + static_cast<uint64_t>(pick);
  if (err != 0) {
    noshell_job_free(job);
    if (err == EAGAIN) return Napi::Number::New(env, 0);
    ThrowErrno(env, "noshell: executor", err);
    return Napi::Value();
  }
  if (ref) {
    e->refs++;
    UpdateRef(e);
  }
  return Napi::Number::New(env, static_cast<double>(id));
}

// execShutdown(): stops this environment's executor threads now (process
// exit with cleanup children: each thread sends their groups killSignal as
// it stops, and ends, which delivers their death signal). Later submits
// throw; the JS side no longer makes them.
Napi::Value ExecShutdown(const Napi::CallbackInfo& info) {
  ExecEnv* e = GetExecEnv(info.Env());
  if (e != nullptr) {
    for (int i = 0; i < e->nex; i++) noshell_executor_stop(e->ex[i]);
    e->nex = 0;
  }
  return info.Env().Undefined();
}

// execSync(...request, as execSubmit's) -> [numbers: Float64Array, outputs:
// [stdout, stderr, all]], or a negative errno when a caller's fd could not
// be taken, or the job could not even be set up (nothing ran). The job runs
// to its end on this thread: the event loop waits, by design.
Napi::Value ExecSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  noshell_job_t* job = nullptr;
  bool ref = false;
  Napi::Value failed;
  if (!BuildOrFail(info, &job, &ref, &failed)) return failed;
  int err = noshell_run_sync(job);
  if (err != 0) {
    noshell_job_free(job);
    return Napi::Number::New(env, -err);
  }
  napi_value numbers, buffer, outputs, pair;
  void* data = nullptr;
  bool ok = napi_create_arraybuffer(env, kResultNumbers * sizeof(double), &data, &buffer) == napi_ok &&
            napi_create_typedarray(env, napi_float64_array, kResultNumbers, buffer, 0, &numbers) == napi_ok &&
            napi_create_array_with_length(env, 3, &outputs) == napi_ok &&
            napi_create_array_with_length(env, 2, &pair) == napi_ok;
  if (ok) {
    PutResult(env, static_cast<double*>(data), outputs, 0, job);
    ok = napi_set_element(env, pair, 0, numbers) == napi_ok && napi_set_element(env, pair, 1, outputs) == napi_ok;
  }
  noshell_job_free(job);
  if (!ok) {
    Napi::Error::New(env, "noshell: out of memory for an execSync result").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  return Napi::Value(env, pair);
}

// execCancel(id): an abort. Queued: it never starts; running: terminated.
Napi::Value ExecCancel(const Napi::CallbackInfo& info) {
  ExecEnv* e = GetExecEnv(info.Env());
  if (e != nullptr && e->nex > 0 && info.Length() == 1 && info[0].IsNumber()) {
    uint64_t id = static_cast<uint64_t>(info[0].As<Napi::Number>().DoubleValue());
    uint64_t i = id % kMaxExecutors;
    if (i < static_cast<uint64_t>(e->nex)) noshell_executor_cancel(e->ex[i], id / kMaxExecutors);
  }
  return info.Env().Undefined();
}

// execStats() -> [queued, running, busy ms, spawned], summed over the threads
// (zeros before execInit).
Napi::Value ExecStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ExecEnv* e = GetExecEnv(env);
  noshell_executor_stats_t st;
  memset(&st, 0, sizeof(st));
  for (int i = 0; e != nullptr && i < e->nex; i++) {
    noshell_executor_stats_t one;
    noshell_executor_stats(e->ex[i], &one);
    st.queued += one.queued;
    st.running += one.running;
    st.busy_ns += one.busy_ns;
    st.spawned += one.spawned;
  }
  Napi::Array a = Napi::Array::New(env, 4);
  a[0u] = Napi::Number::New(env, static_cast<double>(st.queued));
  a[1u] = Napi::Number::New(env, static_cast<double>(st.running));
  a[2u] = Napi::Number::New(env, static_cast<double>(st.busy_ns) / 1e6);
  a[3u] = Napi::Number::New(env, static_cast<double>(st.spawned));
  return a;
}

}  // namespace noshell
