// Finished executor jobs to JS: one onResults(numbers, outputs, room) call
// per wake-up of the Node thread, however many jobs finished meanwhile.
#include <stdlib.h>
#include <sys/wait.h>

#include "executor-env.h"
#include "output-value.h"
#include "../executor/output-runs.h"

namespace noshell {
namespace {

// Numbers per finished job in the Float64Array handed to onResults (its
// outputs go in a plain array beside it).
constexpr uint32_t kNumbers = kResultNumbers;
// Bit of a job's capture that the executor ignores: deliver strings.
constexpr unsigned kAsString = 4;

napi_value Output(napi_env env, noshell_job_t* job, int which) {
  napi_value v;
  if (!(job->capture & (1u << which))) {
    napi_get_undefined(env, &v);
    return v;
  }
  size_t len;
  char* data = noshell_job_take_output(job, which, &len);
  return OutputValue(env, data, len, (job->capture & kAsString) != 0);
}

// With `all`: stdout and stderr interleaved as they came, before the two
// are handed over; undefined when out of memory.
napi_value AllOutput(napi_env env, noshell_job_t* job) {
  size_t len = 0;
  char* data = noshell_runs_interleave(&job->runs, job->out[0], job->out_len[0], job->out[1], job->out_len[1], &len);
  if (data == nullptr) {
    napi_value v;
    napi_get_undefined(env, &v);
    return v;
  }
  return OutputValue(env, data, len, (job->capture & kAsString) != 0);
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

}  // namespace

// Fills one job's numbers: id, errno, step, pid, exit code (-1: none),
// signal (0: none), user us, system us, max RSS KiB, flags, duration ms,
// the failed redirection's index (-1: none);
// and its stdout, stderr (and with `all` both interleaved) at outputs[at],
// outputs[at + 1] (and outputs[at + 2]).
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
  d[11] = job->err != 0 && job->step == NOSHELL_STEP_REDIRECT ? job->detail : -1;
  if (job->capture & NOSHELL_CAPTURE_ALL) napi_set_element(env, outputs, at + 2, AllOutput(env, job));
  if (job->capture & 1u) napi_set_element(env, outputs, at, Output(env, job, 0));
  if (job->capture & 2u) napi_set_element(env, outputs, at + 1, Output(env, job, 1));
}

void OnResultsReady(uv_async_t* handle) {
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
  // The numbers of the whole batch in one buffer (12 napi calls per job
  // were ~10 % of the event loop's time per exec); the batch's size is
  // outputs.length / 3.
  napi_value numbers, outputs, argv[3], fn, recv, result;
  if (!NumbersFor(e, n, &numbers) ||
      napi_create_array_with_length(env, static_cast<size_t>(n) * 3, &outputs) != napi_ok) {
    // Only when V8 is out of memory or the environment is going away.
    FreeJobs(jobs);
    napi_close_handle_scope(env, scope);
    return;
  }
  double* d = e->numbers_data;
  uint32_t i = 0;
  while (jobs != nullptr) {
    noshell_job_t* next = jobs->next;
    PutResult(env, d + static_cast<size_t>(i) * kNumbers, outputs, i * 3, jobs);
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

void ReleaseResultArray(ExecEnv* e) {
  if (e->numbers != nullptr) napi_delete_reference(e->env, e->numbers);
  e->numbers = nullptr;
  e->numbers_data = nullptr;
  e->numbers_jobs = 0;
}

}  // namespace noshell
