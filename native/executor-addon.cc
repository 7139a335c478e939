// The executor's N-API glue. JS calls execInit(onResults) once, then
// execSubmit(...) per exec: the request is copied into a job (strings, the
// environment, input bytes, dup'd caller fds) and queued; the executor
// thread does the rest. Finished jobs come back through one uv_async_t: one
// onResults(numbers, outputs, room) call per wake-up, however many finished.
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

#include "executor.h"
#include "executor-request.h"
#include "watch-internal.h"

namespace noshell {
namespace {

// Numbers per finished job in the Float64Array handed to onResults (its
// two outputs go in a plain array beside it).
constexpr uint32_t kNumbers = 11;
// Small outputs are copied into a fresh Buffer; big ones are handed over.
constexpr size_t kCopyBelow = 64 * 1024;
// Bit of a job's capture that the executor ignores: deliver strings.
constexpr unsigned kAsString = 4;

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
  noshell_env_snapshot_t* env_cache = nullptr;  // this thread's, env-snapshot.h
  // The Float64Array onResults gets, reused from batch to batch (JS reads
  // it during the call only): a fresh ArrayBuffer per wake-up cost ~5 us.
  napi_ref numbers = nullptr;
  double* numbers_data = nullptr;
  size_t numbers_jobs = 0;  // room for this many jobs
};

void Notify(void* arg) {
  uv_async_send(&static_cast<ExecEnv*>(arg)->async);
}

void ReapLaterC(pid_t pid) { ReapLater(pid); }

void UpdateRef(ExecEnv* e) {
  bool want = e->refs > 0;
  if (want == e->async_refd) return;
  e->async_refd = want;
  if (want)
    uv_ref(reinterpret_cast<uv_handle_t*>(&e->async));
  else
    uv_unref(reinterpret_cast<uv_handle_t*>(&e->async));
}

napi_value Output(napi_env env, noshell_job_t* job, int which) {
  napi_value v;
  if (!(job->capture & (1u << which))) {
    napi_get_undefined(env, &v);
    return v;
  }
  size_t len;
  char* data = noshell_job_take_output(job, which, &len);
  if ((job->capture & kAsString) &&
      napi_create_string_utf8(env, len ? data : "", len, &v) == napi_ok) {
    free(data);
    return v;
  }
  // Bytes wanted, or too long for a JS string (TS reports that).
  if (len < kCopyBelow || data == nullptr) {
    if (napi_create_buffer_copy(env, len, len ? data : "", nullptr, &v) != napi_ok)
      napi_get_undefined(env, &v);
    free(data);
  } else if (napi_create_external_buffer(
                 env, len, data, [](napi_env, void* d, void*) { free(d); },
                 nullptr, &v) != napi_ok) {
    free(data);
    napi_get_undefined(env, &v);
  }
  return v;
}

// Fills one job's numbers: id, errno, step, pid, exit code (-1: none),
// signal (0: none), user us, system us, max RSS KiB, flags, duration ms;
// and its stdout, stderr at outputs[at], outputs[at + 1].
void PutResult(napi_env env, double* d, napi_value outputs, uint32_t at, noshell_job_t* job) {
  double code = -1, sig = 0;
  bool known = (job->result_flags & NOSHELL_JOB_STATUS_KNOWN) != 0;
  if (known && WIFEXITED(job->status)) code = WEXITSTATUS(job->status);
  if (known && WIFSIGNALED(job->status)) sig = WTERMSIG(job->status);
  const struct rusage& ru = job->ru;
  d[0] = static_cast<double>(job->id);
  d[1] = job->err;
  d[2] = job->step;
  d[3] = job->pid;
  d[4] = code;
  d[5] = sig;
  d[6] = ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec;
  d[7] = ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec;
  d[8] = static_cast<double>(ru.ru_maxrss);
  d[9] = job->result_flags;
  d[10] = static_cast<double>(job->duration_ns) / 1e6;
  if (job->capture & 1u) napi_set_element(env, outputs, at, Output(env, job, 0));
  if (job->capture & 2u) napi_set_element(env, outputs, at + 1, Output(env, job, 1));
}

void FreeJobs(noshell_job_t* jobs) {
  while (jobs != nullptr) {
    noshell_job_t* next = jobs->next;
    noshell_job_free(jobs);
    jobs = next;
  }
}

// The reused Float64Array, with room for n jobs' numbers (grown as needed).
bool NumbersFor(ExecEnv* e, uint32_t n, napi_value* out) {
  napi_env env = e->env;
  if (e->numbers != nullptr && n <= e->numbers_jobs)
    return napi_get_reference_value(env, e->numbers, out) == napi_ok && *out != nullptr;
  size_t jobs = e->numbers_jobs == 0 ? 64 : e->numbers_jobs;
  while (jobs < n) jobs *= 2;
  size_t count = jobs * kNumbers;
  void* data = nullptr;
  napi_value buffer, array;
  napi_ref ref;
  if (napi_create_arraybuffer(env, count * sizeof(double), &data, &buffer) != napi_ok ||
      napi_create_typedarray(env, napi_float64_array, count, buffer, 0, &array) != napi_ok ||
      napi_create_reference(env, array, 1, &ref) != napi_ok)
    return false;
  if (e->numbers != nullptr) napi_delete_reference(env, e->numbers);
  e->numbers = ref;
  e->numbers_data = static_cast<double*>(data);
  e->numbers_jobs = jobs;
  *out = array;
  return true;
}

// What every executor has finished, as one list; job ids made global
// (local id * kMaxExecutors + executor index, as execSubmit returned them).
noshell_job_t* TakeAll(ExecEnv* e, bool* room) {
  noshell_job_t* head = nullptr;
  noshell_job_t** tail = &head;
  *room = false;
  for (int i = 0; i < e->nex; i++) {
    noshell_job_t* jobs = noshell_executor_take(e->ex[i]);
    if (noshell_executor_take_room(e->ex[i])) *room = true;
    *tail = jobs;
    for (noshell_job_t* j = jobs; j != nullptr; j = j->next) {
      j->id = j->id * kMaxExecutors + static_cast<uint64_t>(i);
      tail = &j->next;
    }
  }
  return head;
}

void OnAsync(uv_async_t* handle) {
  ExecEnv* e = static_cast<ExecEnv*>(handle->data);
  if (e->nex == 0) return;
  bool room = false;
  noshell_job_t* jobs = TakeAll(e, &room);
  if (jobs == nullptr && !room) return;
  napi_env env = e->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) {
    // Teardown under way: nothing can be reported; free what came back.
    FreeJobs(jobs);
    return;
  }
  uint32_t n = 0;
  for (noshell_job_t* j = jobs; j != nullptr; j = j->next) n++;
  // The numbers of the whole batch in one buffer (11 napi calls per job
  // were ~10 % of the event loop's time per exec); the batch's size is
  // outputs.length / 2.
  napi_value numbers, outputs, argv[3], fn, recv, result;
  if (!NumbersFor(e, n, &numbers) ||
      napi_create_array_with_length(env, static_cast<size_t>(n) * 2, &outputs) != napi_ok) {
    // Only when V8 is out of memory or the environment is going away.
    FreeJobs(jobs);
    napi_close_handle_scope(env, scope);
    return;
  }
  double* d = e->numbers_data;
  uint32_t i = 0;
  while (jobs != nullptr) {
    noshell_job_t* next = jobs->next;
    PutResult(env, d + static_cast<size_t>(i) * kNumbers, outputs, i * 2, jobs);
    i++;
    if (jobs->user != nullptr) e->refs--;
    noshell_job_free(jobs);
    jobs = next;
  }
  UpdateRef(e);
  argv[0] = numbers;
  argv[1] = outputs;
  napi_get_boolean(env, room, &argv[2]);
  napi_get_reference_value(env, e->on_results, &fn);
  napi_get_global(env, &recv);
  // Through MakeCallback: nextTicks and microtasks (the execs' promise
  // continuations) drain after it, as after any libuv callback in Node.
  if (fn != nullptr &&
      napi_make_callback(env, e->context, recv, fn, 3, argv, &result) == napi_pending_exception) {
    napi_value err;
    napi_get_and_clear_last_exception(env, &err);
    napi_fatal_exception(env, err);
  }
  napi_close_handle_scope(env, scope);
}

void OnAsyncClosed(uv_handle_t* handle) {
  ExecEnv* e = static_cast<ExecEnv*>(handle->data);
  napi_remove_async_cleanup_hook(e->cleanup);
  noshell_env_snapshot_release(e->env_cache);
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
  if (e->numbers != nullptr) napi_delete_reference(e->env, e->numbers);
  e->on_results = nullptr;
  e->context = nullptr;
  e->numbers = nullptr;
  e->numbers_data = nullptr;
  e->numbers_jobs = 0;
  uv_close(reinterpret_cast<uv_handle_t*>(&e->async), OnAsyncClosed);
}

// NOSHELL_EXECUTOR_THREADS (1-4), else 2 where there are 2 or more CPUs.
int ExecutorThreads() {
  const char* v = getenv("NOSHELL_EXECUTOR_THREADS");
  if (v != nullptr && v[0] >= '1' && v[0] <= '0' + kMaxExecutors && v[1] == '\0') return v[0] - '0';
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

}  // namespace

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
  int err = uv_async_init(loop, &e->async, OnAsync);
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
  int err = BuildJob(info, &e->env_cache, &job, &ref);
  if (err != 0) {
    if (err > 0) return Napi::Number::New(env, -err);
    return Napi::Value();  // a TypeError is pending
  }
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
  err = noshell_executor_submit(e->ex[pick], job, &id);
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
