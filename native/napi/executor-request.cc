#include "executor-request.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child-setup.h"
#include "inherited-env.h"
#include "js-strings.h"

namespace noshell {
namespace {

constexpr size_t kArgs = 23;

bool OptionalCopy(napi_env env, Napi::Value v, char** out) {
  *out = nullptr;
  if (v.IsNull() || v.IsUndefined()) return true;
  if (!v.IsString()) return false;
  OwnedString s;
  if (!s.Copy(env, v)) return false;
  *out = s.Release();
  return true;
}

double NumberOr(const Napi::Value& v, double fallback) {
  return v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : fallback;
}

size_t Bytes(double v) {
  return v >= 0 && v < 9e15 ? static_cast<size_t>(v) : static_cast<size_t>(9e15);
}

uint64_t Millis(double v) {
  return v > 0 && v < 9e15 ? static_cast<uint64_t>(v) : 0;
}

// Truthiness without node-addon-api's ToBoolean(): when V8 is terminating
// (worker.terminate() during this call) napi_coerce_to_bool fails, ToBoolean()
// returns an empty Boolean, and Value() on it raised an error on a null env,
// which node-addon-api treats as fatal: SIGABRT of the whole process.
bool Truthy(napi_env env, napi_value v) {
  napi_value b;
  bool out = false;
  if (napi_coerce_to_bool(env, v, &b) != napi_ok || napi_get_value_bool(env, b, &out) != napi_ok)
    return false;
  return out;
}

int Fail(Napi::Env env, noshell_job_t* job, const char* message) {
  noshell_job_free(job);
  Napi::TypeError::New(env, message).ThrowAsJavaScriptException();
  return -1;
}

}  // namespace

int BuildJob(const Napi::CallbackInfo& info, noshell_job_t** out, bool* ref) {
  Napi::Env env = info.Env();
  if (info.Length() != kArgs || !info[0].IsString() || !info[5].IsTypedArray() ||
      !info[6].IsNumber() || !info[7].IsNumber() || !info[8].IsNumber() ||
      !info[9].IsNumber() || !info[11].IsNumber() || !info[12].IsNumber()) {
    Napi::TypeError::New(env, "noshell: bad arguments to execSubmit").ThrowAsJavaScriptException();
    return -1;
  }
  Napi::Int32Array stdio = info[5].As<Napi::Int32Array>();
  if (stdio.TypedArrayType() != napi_int32_array || stdio.ElementLength() != 6) {
    Napi::TypeError::New(env, "noshell: stdio must be Int32Array(6)").ThrowAsJavaScriptException();
    return -1;
  }
  noshell_job_t* job = noshell_job_new();
  if (job == nullptr) {
    Napi::TypeError::New(env, "noshell: out of memory").ThrowAsJavaScriptException();
    return -1;
  }
  OwnedString file;
  StringList argv, envp;
  bool ok = file.Copy(env, info[0]) && argv.Load(env, info[1]) &&
            OptionalCopy(env, info[3], &job->own_search_path) &&
            OptionalCopy(env, info[4], &job->own_cwd);
  if (ok && !(info[2].IsNull() || info[2].IsUndefined())) {
    ok = envp.Load(env, info[2]);
    job->own_envp = envp.Release();
  } else if (ok) {
    // Inheriting: environ as it is now, not as the executor thread would
    // read it later.
    job->env_snapshot = InheritedEnv();
    ok = job->env_snapshot != nullptr;
  }
  if (!ok) return Fail(env, job, "noshell: bad strings in execSubmit (or out of memory)");
  job->own_file = file.Release();
  job->own_argv = argv.Release();

  noshell_spawn_t* req = &job->req;
  req->file = job->own_file;
  req->argv = job->own_argv;
  if (job->env_snapshot != nullptr) {
    req->envp = job->env_snapshot->envp;
    req->search_path = job->own_search_path != nullptr ? job->own_search_path : job->env_snapshot->path;
  } else {
    req->envp = job->own_envp;
    req->search_path = job->own_search_path;
  }
  req->cwd = job->own_cwd;
  req->flags = info[6].As<Napi::Number>().Uint32Value();
  req->uid = info[7].As<Napi::Number>().Uint32Value();
  req->gid = info[8].As<Napi::Number>().Uint32Value();
  req->method = static_cast<noshell_method_t>(info[9].As<Napi::Number>().Int32Value());
  if (info[10].IsTypedArray()) {
    Napi::Uint32Array g = info[10].As<Napi::Uint32Array>();
    if (g.TypedArrayType() != napi_uint32_array)
      return Fail(env, job, "noshell: groups must be a Uint32Array");
    size_t n = g.ElementLength();
    job->own_groups = static_cast<gid_t*>(malloc((n ? n : 1) * sizeof(gid_t)));
    if (job->own_groups == nullptr) return Fail(env, job, "noshell: out of memory");
    if (n) memcpy(job->own_groups, g.Data(), n * sizeof(gid_t));
    req->groups = job->own_groups;
    req->ngroups = n;
  }
  for (int i = 0; i < 3; i++) {
    req->stdio[i].kind = static_cast<noshell_stdio_kind_t>(stdio[i * 2]);
    req->stdio[i].fd = stdio[i * 2 + 1];
    if (req->stdio[i].kind != NOSHELL_STDIO_FD) continue;
    // The caller may close its fd before the executor gets to the spawn.
    int fd = fcntl(req->stdio[i].fd, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) {
      int err = errno;
      noshell_job_free(job);
      return err;
    }
    job->own_fds[i] = fd;
    req->stdio[i].fd = fd;
  }
  job->capture = info[11].As<Napi::Number>().Uint32Value();
  job->max_buffer = Bytes(info[12].As<Napi::Number>().DoubleValue());
  if (info[13].IsTypedArray()) {
    Napi::Uint8Array in = info[13].As<Napi::Uint8Array>();
    if (in.TypedArrayType() != napi_uint8_array) return Fail(env, job, "noshell: input must be a Uint8Array");
    size_t n = in.ElementLength();
    if (n > 0) {
      job->input = static_cast<char*>(malloc(n));
      if (job->input == nullptr) return Fail(env, job, "noshell: out of memory for input");
      memcpy(job->input, in.Data(), n);
      job->input_len = n;
    }
  }
  job->timeout_ms = Millis(NumberOr(info[14], 0));
  job->kill_signal = static_cast<int>(NumberOr(info[15], 15));
  job->force_kill_after_ms = Millis(NumberOr(info[16], 0));
  job->kill_group = Truthy(env, info[17]) ? 1 : 0;
  *ref = Truthy(env, info[18]);
  // Output grace in ms; -1 (or anything not a number ≥ 0): read output to its end.
  double grace = NumberOr(info[21], -1);
  job->output_grace_ms = grace >= 0 && grace <= 2147483647.0 ? static_cast<int64_t>(grace) : -1;
  ChildSetupMemory mem;
  if (!LoadChildSetup(env, info[19], info[20], info[22], req, &mem)) {
    noshell_job_free(job);
    return -1;
  }
  job->own_rlimits = mem.rlimits;
  job->own_cgroup = mem.cgroup;
  job->own_redirects = mem.redirects;
  *out = job;
  return 0;
}

}  // namespace noshell
