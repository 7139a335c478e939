// N-API glue: converts the typed request from src/binding/binding.ts into a
// noshell_spawn_t, starts the child and its exit watch. Validation and policy
// live in TypeScript; this file trusts the shapes binding.ts guarantees but
// still refuses anything that would make it read out of bounds.
#include <errno.h>
#include <fcntl.h>
#include <napi.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include <uv.h>

#include "child-setup.h"
#include "executor-addon.h"
#include "inherited-env.h"
#include "js-strings.h"
#include "malloc-tune.h"
#include "scrape-lines-addon.h"
#include "../core/spawn.h"
#include "watch.h"

namespace noshell {
namespace {

bool OptionalString(napi_env env, Napi::Value v, OwnedString* out,
                    const char** ptr) {
  if (v.IsNull() || v.IsUndefined()) {
    *ptr = nullptr;
    return true;
  }
  if (!v.IsString() || !out->Copy(env, v)) return false;
  *ptr = out->p;
  return true;
}

// spawn(file, argv, envp|null, searchPath|null, cwd|null, stdio: Int32Array(6),
//       flags, uid, gid, method, out: Int32Array(7), capture, maxBuffer,
//       onExit, onOverflow|undefined, groups: Uint32Array|null,
//       setup: Float64Array|null, cgroup: string|null, outputGraceMs,
//       redirects: array|null, captureFrom: Int32Array(2)|null, holdGrace: boolean)
//   -> watch id (number) | undefined
// out receives [errno, step, pid, fd0, fd1, fd2, redirect]; errno 0 means
// started; redirect: the failed redirection's index, else -1.
// captureFrom: [stdout, stderr] read ends (-1: none) of pipes whose write
// end the child gets as that fd (its stdio kind must be an fd and the
// stream captured): taken over (closed whatever happens) and captured as
// the child's output, which a pipeline's other stages write too. holdGrace: the output grace waits for releaseGrace(watch) (a
// pipeline's last stage, whose other stages still run).
// capture: bit 1 stdout, bit 2 stderr are read natively (their fds in out
// are -1), bit 4 delivers them as strings, bit 8 truncates at maxBuffer
// (reads on, drops the rest) instead of stopping and calling onOverflow.
Napi::Value Spawn(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  // Taken over before anything can fail: closed on every error path.
  struct FdGuard {
    int fd = -1;
    ~FdGuard() {
      if (fd >= 0) close(fd);
    }
  } from_guard[2];
  if (info.Length() == 22 && info[20].IsTypedArray()) {
    Napi::TypedArray t = info[20].As<Napi::TypedArray>();
    if (t.TypedArrayType() == napi_int32_array && t.ElementLength() == 2) {
      Napi::Int32Array a = info[20].As<Napi::Int32Array>();
      from_guard[0].fd = a[0];
      from_guard[1].fd = a[1];
    }
  }
  if (info.Length() != 22 || !info[0].IsString() || !info[5].IsTypedArray() ||
      !info[6].IsNumber() || !info[7].IsNumber() || !info[8].IsNumber() ||
      !info[9].IsNumber() || !info[10].IsTypedArray() ||
      !info[11].IsNumber() || !info[12].IsNumber() || !info[13].IsFunction()) {
    Napi::TypeError::New(env, "noshell: bad arguments to native spawn")
        .ThrowAsJavaScriptException();
    return Napi::Value();
  }
  Napi::Int32Array stdio = info[5].As<Napi::Int32Array>();
  Napi::Int32Array out = info[10].As<Napi::Int32Array>();
  if (stdio.TypedArrayType() != napi_int32_array || stdio.ElementLength() != 6 ||
      out.TypedArrayType() != napi_int32_array || out.ElementLength() != 7) {
    Napi::TypeError::New(env, "noshell: stdio must be Int32Array(6), out Int32Array(7)")
        .ThrowAsJavaScriptException();
    return Napi::Value();
  }

  OwnedString file, search_path, cwd;
  StringList argv, envp;
  noshell_spawn_t req = {};
  bool ok = file.Copy(env, info[0]) && argv.Load(env, info[1]) &&
            OptionalString(env, info[3], &search_path, &req.search_path) &&
            OptionalString(env, info[4], &cwd, &req.cwd);
  if (ok && !(info[2].IsNull() || info[2].IsUndefined()))
    ok = envp.Load(env, info[2]);
  if (!ok) {
    Napi::TypeError::New(env, "noshell: bad strings in native spawn")
        .ThrowAsJavaScriptException();
    return Napi::Value();
  }

  // Inheriting: never environ itself, which another thread may be changing
  // while the child is built. The reference lasts until the child has
  // exec'd (or, for fork, has its own copy of memory).
  EnvSnapshotRef inherited;
  if (info[2].IsNull() || info[2].IsUndefined()) {
    inherited.snap = InheritedEnv();
    if (inherited.snap == nullptr) {
      Napi::Error::New(env, "noshell: out of memory for the environment").ThrowAsJavaScriptException();
      return Napi::Value();
    }
    req.envp = inherited.snap->envp;
    if (req.search_path == nullptr) req.search_path = inherited.snap->path;
  } else {
    req.envp = envp.data();
  }
  req.file = file.p;
  req.argv = argv.data();
  for (int i = 0; i < 3; i++) {
    req.stdio[i].kind = static_cast<noshell_stdio_kind_t>(stdio[i * 2]);
    req.stdio[i].fd = stdio[i * 2 + 1];
  }
  req.flags = info[6].As<Napi::Number>().Uint32Value();
  req.uid = info[7].As<Napi::Number>().Uint32Value();
  req.gid = info[8].As<Napi::Number>().Uint32Value();
  req.method = static_cast<noshell_method_t>(
      info[9].As<Napi::Number>().Int32Value());
  if (info[15].IsTypedArray()) {
    // gid_t is uint32_t on Linux: the array's memory is the list setgroups()
    // takes, and it stays alive (info holds it) until noshell_spawn returns.
    Napi::Uint32Array g = info[15].As<Napi::Uint32Array>();
    if (g.TypedArrayType() != napi_uint32_array) {
      Napi::TypeError::New(env, "noshell: groups must be a Uint32Array")
          .ThrowAsJavaScriptException();
      return Napi::Value();
    }
    static_assert(sizeof(gid_t) == sizeof(uint32_t), "gid_t is 32 bits");
    req.groups = reinterpret_cast<const gid_t*>(g.Data());
    req.ngroups = g.ElementLength();
  }
  uint32_t capture = info[11].As<Napi::Number>().Uint32Value();
  double max_buffer = info[12].As<Napi::Number>().DoubleValue();
  ChildSetupMemory mem;
  if (!LoadChildSetup(env, info[16], info[17], info[19], &req, &mem)) return Napi::Value();
  for (int i = 0; i < 2; i++) {
    if (from_guard[i].fd >= 0 && !((capture & (1u << i)) && req.stdio[i + 1].kind == NOSHELL_STDIO_FD)) {
      FreeChildSetup(&mem);
      Napi::TypeError::New(env, "noshell: captureFrom needs that stream captured and given as an fd")
          .ThrowAsJavaScriptException();
      return Napi::Value();
    }
  }

  noshell_child_t child;
  int err = noshell_spawn(&req, &child);
  FreeChildSetup(&mem);
  for (int i = 0; err == 0 && i < 2; i++) {
    // The capture reads the pipe other stages write to as well.
    if (from_guard[i].fd < 0) continue;
    child.fds[i + 1] = from_guard[i].fd;
    from_guard[i].fd = -1;
  }
  out[0] = err;
  out[1] = child.step;
  out[2] = child.pid;
  out[3] = child.fds[0];
  out[4] = child.fds[1];
  out[5] = child.fds[2];
  out[6] = child.detail;
  if (err != 0) return env.Undefined();

  WatchRequest watch_req;
  watch_req.pid = child.pid;
  if (req.flags & NOSHELL_JOIN_PGROUP) watch_req.group = req.pgid;
  for (int i = 0; i < 2; i++) {
    bool native = (capture & (1u << i)) && child.fds[i + 1] >= 0;
    watch_req.capture_fd[i] = native ? child.fds[i + 1] : -1;
    if (native) out[4 + i] = -1;
  }
  watch_req.max_buffer = max_buffer >= 0 && max_buffer < 9e15
                             ? static_cast<size_t>(max_buffer)
                             : static_cast<size_t>(9e15);
  watch_req.as_string = (capture & 4u) != 0;
  watch_req.truncate = (capture & 8u) != 0;
  watch_req.all = (capture & 16u) != 0;
  // -1 (or anything not a number ≥ 0): captured output is read to its end.
  double grace = info[18].IsNumber() ? info[18].As<Napi::Number>().DoubleValue() : -1;
  watch_req.grace_ms = grace >= 0 && grace <= 2147483647.0 ? static_cast<int64_t>(grace) : -1;
  watch_req.hold_grace = info[21].IsBoolean() && info[21].As<Napi::Boolean>().Value();
  watch_req.on_exit = info[13].As<Napi::Function>();
  watch_req.on_overflow = info[14];
  int watch_err = 0;
  Napi::Value watch = WatchChild(env, watch_req, &watch_err);
  if (watch.IsEmpty()) {
    // The child was killed and reaped; its pipes must not outlive it
    // (captured ones were closed by WatchChild). JS sees a spawn error.
    for (int i = 0; i < 3; i++) {
      if (out[3 + i] >= 0) close(out[3 + i]);
      out[3 + i] = -1;
    }
    out[0] = watch_err != 0 ? watch_err : EIO;
    out[1] = NOSHELL_STEP_CAPTURE;
    out[2] = -1;
    return env.Undefined();
  }
  return watch;
}

// pipe() -> [readFd, writeFd], both O_CLOEXEC: a pipeline's shared stderr,
// or its stdin when input is given. Throws an Error with the errno's code.
Napi::Value Pipe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    int e = errno;
    Napi::Error err = Napi::Error::New(env, strerror(e));
    err.Set("errno", Napi::Number::New(env, -e));
    err.Set("syscall", Napi::String::New(env, "pipe2"));
    err.ThrowAsJavaScriptException();
    return Napi::Value();
  }
  Napi::Int32Array fds = Napi::Int32Array::New(env, 2);
  fds[0] = p[0];
  fds[1] = p[1];
  return fds;
}

// The glibc functions a link-time reference would make the addon require a
// newer glibc for (issue 10: the prebuild must load on glibc 2.28), looked up
// once in the libc (and, before glibc 2.34, libpthread) already loaded.
uv_once_t libc_once = UV_ONCE_INIT;

void* FindLibcSymbol(const char* name) {
  static const char* const libs[] = {"libc.so.6", "libpthread.so.0"};
  for (const char* lib : libs) {
    uv_lib_t handle;
    void* ptr = nullptr;
    if (uv_dlopen(lib, &handle) != 0) continue;
    // Already loaded by Node: closing our handle unloads nothing.
    bool found = uv_dlsym(&handle, name, &ptr) == 0;
    uv_dlclose(&handle);
    if (found) return ptr;
  }
  return nullptr;
}

void ResolveLibc() {
  noshell_addclosefrom_np = FindLibcSymbol("posix_spawn_file_actions_addclosefrom_np");
  noshell_addchdir_np = FindLibcSymbol("posix_spawn_file_actions_addchdir_np");
  SetThreadDetach(FindLibcSymbol("pthread_detach"));
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  // Read at load: for tests of the fallbacks old kernels take, and of a
  // capture that cannot start. Process-wide; workers load the same values.
  InitEnvLock();
  unsigned forced = 0;
  if (EnvFlag("NOSHELL_NO_CLOSE_RANGE")) forced |= NOSHELL_FALLBACK_CLOSE_RANGE;
  if (EnvFlag("NOSHELL_NO_PIDFD")) forced |= NOSHELL_FALLBACK_PIDFD;
  if (EnvFlag("NOSHELL_FAULT_CAPTURE")) forced |= NOSHELL_FAULT_CAPTURE;
  if (EnvFlag("NOSHELL_NO_SPAWN_NP")) forced |= NOSHELL_FALLBACK_SPAWN_NP;
  if (EnvFlag("NOSHELL_NO_PROC_SIGNALS")) forced |= NOSHELL_FALLBACK_PROC_SIGNALS;
  __atomic_store_n(&noshell_forced, forced, __ATOMIC_RELAXED);
  uv_once(&libc_once, ResolveLibc);

  Napi::Array steps = Napi::Array::New(env, NOSHELL_STEP_COUNT);
  for (uint32_t i = 0; i < NOSHELL_STEP_COUNT; i++)
    steps[i] = Napi::String::New(
        env, noshell_step_name(static_cast<noshell_step_t>(i)));
  exports["spawn"] = Napi::Function::New(env, Spawn, "spawn");
  exports["ref"] = Napi::Function::New(env, WatchRef, "ref");
  exports["unref"] = Napi::Function::New(env, WatchUnref, "unref");
  exports["kill"] = Napi::Function::New(env, WatchKill, "kill");
  exports["abandon"] = Napi::Function::New(env, WatchAbandon, "abandon");
  exports["cutOutput"] = Napi::Function::New(env, WatchCutOutput, "cutOutput");
  exports["releaseGrace"] = Napi::Function::New(env, WatchReleaseGrace, "releaseGrace");
  exports["pipe"] = Napi::Function::New(env, Pipe, "pipe");
  exports["execInit"] = Napi::Function::New(env, ExecInit, "execInit");
  exports["execSubmit"] = Napi::Function::New(env, ExecSubmit, "execSubmit");
  exports["execCancel"] = Napi::Function::New(env, ExecCancel, "execCancel");
  exports["execShutdown"] = Napi::Function::New(env, ExecShutdown, "execShutdown");
  exports["execSync"] = Napi::Function::New(env, ExecSync, "execSync");
  exports["execStats"] = Napi::Function::New(env, ExecStats, "execStats");
  exports["scrapeLines"] = Napi::Function::New(env, ScrapeLines, "scrapeLines");
  exports["mmapThreshold"] = Napi::Function::New(env, MmapThreshold, "mmapThreshold");
  exports["steps"] = steps;
  exports["envLocked"] = Napi::Boolean::New(env, EnvLocked());
  return exports;
}

}  // namespace
}  // namespace noshell

static Napi::Object InitNoshell(Napi::Env env, Napi::Object exports) {
  return noshell::Init(env, exports);
}

NODE_API_MODULE(noshell, InitNoshell)
