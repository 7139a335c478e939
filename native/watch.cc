#include "watch.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <mutex>
#include <unordered_map>
#include <utility>
#include <thread>

#include "capture.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

namespace noshell {
namespace {

// Small outputs are copied into a fresh Buffer; big ones are handed over.
const size_t kCopyBelow = 64 * 1024;

// One per child, freed when it has been reported and every uv handle is
// closed. JS holds only its id: a late ref()/unref()/kill() with a stale id
// finds nothing (ESRCH) instead of freed memory, and no per-child External
// with a finalizer is left for the GC.
struct Watch {
  union {
    uv_poll_t poll;
    uv_timer_t timer;
  } h;
  Capture cap[2];          // stdout, stderr
  bool use_timer = false;
  bool exit_active = false; // pidfd poll / timer running
  bool exited = false;      // seen to exit; a zombie until reaped
  bool reaped = false;      // wait4() done: the pid is no longer ours
  bool abandon = false;     // stop reading output once the child has exited
  bool reported = false;
  uint64_t id = 0;           // key in the registry; what JS holds
  bool as_string = false;
  bool kill_group_on_exit = false; // timeout/abort: SIGKILL the rest at exit
  napi_async_cleanup_hook_handle cleanup = nullptr;
  int handles = 0;          // uv handles not yet closed
  unsigned delay_ms = 1;
  napi_env env = nullptr;
  pid_t pid = -1;
  int pidfd = -1;
  int status = 0;
  bool status_known = false;
  struct rusage ru = {};
  napi_ref on_exit = nullptr;
  napi_ref on_overflow = nullptr;
  napi_async_context async_context = nullptr;

  uv_handle_t* exit_handle() { return reinterpret_cast<uv_handle_t*>(&h); }
};

// Process-wide (workers have their own envs and loop threads); each entry
// is only ever deleted by its own env's thread.
std::mutex registry_mutex;
std::unordered_map<uint64_t, std::pair<napi_env, Watch*>> registry;
uint64_t next_id = 1;

void Register(Watch* w) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  w->id = next_id++;
  registry.emplace(w->id, std::make_pair(w->env, w));
}

void MaybeDelete(Watch* w) {
  // Node waits for this before it unloads the addon at environment teardown
  // (worker exit): no close callback may run after that.
  if (w->handles == 0 && w->cleanup != nullptr) {
    napi_remove_async_cleanup_hook(w->cleanup);
    w->cleanup = nullptr;
  }
  if (w->handles > 0 || !w->reported) return;
  if (w->id != 0) {
    std::lock_guard<std::mutex> lock(registry_mutex);
    registry.erase(w->id);
  }
  for (Capture& c : w->cap) free(c.data);
  delete w;
}

void OnHandleClosed(uv_handle_t* handle) {
  Watch* w = static_cast<Watch*>(handle->data);
  if (handle == w->exit_handle() && w->pidfd >= 0) {
    close(w->pidfd);
    w->pidfd = -1;
  }
  w->handles--;
  MaybeDelete(w);
}

void OnCaptureClosed(uv_handle_t* handle) {
  Capture* c = static_cast<Capture*>(handle->data);
  Watch* w = static_cast<Watch*>(c->owner);
  w->handles--;
  MaybeDelete(w);
}

void StopExitWatch(Watch* w) {
  if (!w->exit_active) return;
  w->exit_active = false;
  if (w->use_timer)
    uv_timer_stop(&w->h.timer);
  else
    uv_poll_stop(&w->h.poll);
  uv_close(w->exit_handle(), OnHandleClosed);
}

void ReleaseJs(Watch* w) {
  if (w->on_exit != nullptr) napi_delete_reference(w->env, w->on_exit);
  if (w->on_overflow != nullptr) napi_delete_reference(w->env, w->on_overflow);
  if (w->async_context != nullptr) napi_async_destroy(w->env, w->async_context);
  w->on_exit = w->on_overflow = nullptr;
  w->async_context = nullptr;
}

void PinAddon() {
  // The reaper thread runs code of this library, which Node unloads with the
  // worker's environment: keep it mapped for the life of the process.
  static std::once_flag once;
  std::call_once(once, [] {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&PinAddon), &info) != 0 &&
        info.dli_fname != nullptr)
      dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  });
}

void ReapLater(pid_t pid) {
  // The environment is going away with the child still running: nobody
  // would ever reap it. A detached thread waits for it instead.
  PinAddon();
  std::thread([pid] {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }).detach();
}

void CleanupHook(napi_async_cleanup_hook_handle handle, void* arg) {
  // Environment teardown (worker exit): stop everything, call no JS. The
  // hook is removed in MaybeDelete once every handle has closed.
  (void) handle;
  Watch* w = static_cast<Watch*>(arg);
  if (!w->reaped) {
    int status;
    pid_t r;
    do
      r = waitpid(w->pid, &status, WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == 0) ReapLater(w->pid);
    w->exited = w->reaped = true;
  }
  StopExitWatch(w);
  for (Capture& c : w->cap) CaptureStop(&c);
  ReleaseJs(w);
  w->reported = true;
  MaybeDelete(w);
}

// Calls fn(argv) through MakeCallback, so nextTicks and microtasks drain as
// after any libuv callback in Node; an exception goes to 'uncaughtException'.
void CallJs(Watch* w, napi_ref fn_ref, size_t argc, napi_value* argv) {
  napi_value fn, recv, result;
  napi_get_reference_value(w->env, fn_ref, &fn);
  napi_get_global(w->env, &recv);
  if (napi_make_callback(w->env, w->async_context, recv, fn, argc, argv,
                         &result) == napi_pending_exception) {
    napi_value err;
    napi_get_and_clear_last_exception(w->env, &err);
    napi_fatal_exception(w->env, err);
  }
}

napi_value Output(Watch* w, Capture* c, bool captured) {
  napi_env env = w->env;
  napi_value v;
  if (!captured) {
    napi_get_undefined(env, &v);
    return v;
  }
  size_t len;
  char* data = CaptureTake(c, &len);
  if (w->as_string &&
      napi_create_string_utf8(env, len ? data : "", len, &v) == napi_ok) {
    free(data);
    return v;
  }
  // Bytes wanted, or too long for a JS string (TS reports that).
  if (len < kCopyBelow || data == nullptr) {
    napi_create_buffer_copy(env, len, len ? data : "", nullptr, &v);
    free(data);
  } else if (napi_create_external_buffer(
                 env, len, data,
                 [](napi_env, void* d, void*) { free(d); }, nullptr,
                 &v) != napi_ok) {
    free(data);
    napi_get_undefined(env, &v);
  }
  return v;
}

void Report(Watch* w) {
  w->reported = true;
  napi_env env = w->env;
  double code = -1, sig = 0;
  if (w->status_known && WIFEXITED(w->status)) code = WEXITSTATUS(w->status);
  if (w->status_known && WIFSIGNALED(w->status)) sig = WTERMSIG(w->status);
  const struct rusage& ru = w->ru;

  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value argv[8];
  napi_create_double(env, code, &argv[0]);
  napi_create_double(env, sig, &argv[1]);
  napi_create_double(env, ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec, &argv[2]);
  napi_create_double(env, ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec, &argv[3]);
  napi_create_double(env, static_cast<double>(ru.ru_maxrss), &argv[4]);
  argv[5] = Output(w, &w->cap[0], w->cap[0].on_end != nullptr);
  argv[6] = Output(w, &w->cap[1], w->cap[1].on_end != nullptr);
  napi_create_int32(env, (w->cap[0].overflow ? 1 : 0) | (w->cap[1].overflow ? 2 : 0), &argv[7]);
  napi_ref fn = w->on_exit;
  w->on_exit = nullptr;
  CallJs(w, fn, 8, argv);
  napi_delete_reference(env, fn);
  ReleaseJs(w);
  napi_close_handle_scope(env, scope);
}

// The child is reaped only once it has exited *and* every captured stream
// has ended. Until then its zombie pins its pid and its process group id, so
// kill(-pid) after a timeout reaches the group it ran, never a reused one.
void MaybeFinish(Watch* w) {
  if (w->reported || !w->exited || w->cap[0].active || w->cap[1].active) return;
  if (!w->reaped) {
    int status = 0;
    pid_t r;
    do
      r = wait4(w->pid, &status, WNOHANG, &w->ru);
    while (r < 0 && errno == EINTR);
    if (r == 0) return;  // cannot happen after an exit was seen; be safe
    // r < 0 (ECHILD): someone else reaped it (SIGCHLD set to SIG_IGN, or a
    // waitpid(-1) elsewhere in the process). Its status is lost; say so.
    w->status = status;
    w->status_known = r == w->pid;
    w->reaped = true;
  }
  Report(w);
}

void OnCaptureEnd(Capture* c) {
  Watch* w = static_cast<Watch*>(c->owner);
  if (c->overflow && !c->truncate && w->on_overflow != nullptr && !w->reported) {
    // Policy (kill the child? which signal?) is the caller's.
    napi_handle_scope scope;
    if (napi_open_handle_scope(w->env, &scope) == napi_ok) {
      napi_value which;
      napi_create_int32(w->env, c == &w->cap[0] ? 1 : 2, &which);
      CallJs(w, w->on_overflow, 1, &which);
      napi_close_handle_scope(w->env, scope);
    }
  }
  MaybeFinish(w);
}

void StopCaptures(Watch* w) {
  for (Capture& c : w->cap) CaptureStop(&c);
}

// The child has exited (a zombie now, not reaped).
void OnExited(Watch* w) {
  w->exited = true;
  StopExitWatch(w);
  // Timeout/abort: whatever is left of the group dies with the leader.
  if (w->kill_group_on_exit) kill(-w->pid, SIGKILL);
  // Output held open by something that escaped the group is given up on.
  if (w->abandon) StopCaptures(w);
  MaybeFinish(w);
}

// Whether the child has exited, without reaping it. ECHILD counts as exited
// (someone else reaped it; MaybeFinish reports the status as lost).
bool HasExited(pid_t pid) {
  siginfo_t info;
  info.si_pid = 0;
  int e;
  do
    e = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  while (e < 0 && errno == EINTR);
  return e < 0 || info.si_pid != 0;
}

void OnPidfd(uv_poll_t* handle, int status, int events) {
  (void) status;
  (void) events;
  OnExited(static_cast<Watch*>(handle->data));
}

void OnTimer(uv_timer_t* handle) {
  Watch* w = static_cast<Watch*>(handle->data);
  if (HasExited(w->pid)) {
    OnExited(w);
    return;
  }
  // Fallback for kernels without pidfd_open (< 5.3): back off to 50 ms.
  if (w->delay_ms < 50) w->delay_ms *= 2;
  uv_timer_start(&w->h.timer, OnTimer, w->delay_ms, 0);
}

Watch* Unwrap(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsNumber()) return nullptr;
  double id = info[0].As<Napi::Number>().DoubleValue();
  if (!(id >= 1)) return nullptr;
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto it = registry.find(static_cast<uint64_t>(id));
  if (it == registry.end() || it->second.first != info.Env()) return nullptr;
  return it->second.second;
}

int StartExitWatch(uv_loop_t* loop, Watch* w) {
  // pidfd_open fds are always O_CLOEXEC. The child cannot have been reaped
  // yet (only we reap it), so its pid still names it.
  w->pidfd = static_cast<int>(syscall(SYS_pidfd_open, w->pid, 0));
  int err;
  if (w->pidfd >= 0) {
    err = uv_poll_init(loop, &w->h.poll, w->pidfd);
  } else {
    w->use_timer = true;
    err = uv_timer_init(loop, &w->h.timer);
  }
  if (err != 0) return err;
  w->h.poll.data = w;  // same offset in both members of the union
  w->handles++;
  w->exit_active = true;
  err = w->use_timer ? uv_timer_start(&w->h.timer, OnTimer, 1, 0)
                     : uv_poll_start(&w->h.poll, UV_READABLE, OnPidfd);
  return err;
}

}  // namespace

Napi::Value WatchChild(Napi::Env env, const WatchRequest& req) {
  uv_loop_t* loop = nullptr;
  Watch* w = new Watch();
  w->env = env;
  w->pid = req.pid;
  w->as_string = req.as_string;
  napi_create_reference(env, req.on_exit, 1, &w->on_exit);
  if (!req.on_overflow.IsEmpty() && req.on_overflow.IsFunction())
    napi_create_reference(env, req.on_overflow, 1, &w->on_overflow);
  napi_async_init(env, nullptr, Napi::String::New(env, "noshell:child"),
                  &w->async_context);

  int err = napi_get_uv_event_loop(env, &loop) == napi_ok ? 0 : UV_EINVAL;
  if (err == 0) err = StartExitWatch(loop, w);
  for (int i = 0; i < 2; i++) {
    if (req.capture_fd[i] < 0) continue;
    if (err != 0) {
      close(req.capture_fd[i]);  // never handed to a capture
      continue;
    }
    err = CaptureStart(loop, &w->cap[i], req.capture_fd[i], req.max_buffer,
                       req.truncate, OnCaptureEnd, OnCaptureClosed, w);
    if (err == 0) w->handles++;
  }
  if (err != 0) {
    // Cannot watch it: kill and reap now rather than leak a zombie.
    kill(req.pid, SIGKILL);
    while (waitpid(req.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    w->exited = w->reaped = w->reported = true;
    StopExitWatch(w);
    for (Capture& c : w->cap) CaptureStop(&c);
    ReleaseJs(w);
    if (w->pidfd >= 0 && w->handles == 0) close(w->pidfd);
    MaybeDelete(w);
    Napi::Error::New(env, std::string("noshell: cannot watch child: ") +
                              uv_strerror(err))
        .ThrowAsJavaScriptException();
    return Napi::Value();
  }
  napi_add_async_cleanup_hook(env, CleanupHook, w, &w->cleanup);
  Register(w);
  return Napi::Number::New(env, static_cast<double>(w->id));
}

Napi::Value WatchRef(const Napi::CallbackInfo& info) {
  Watch* w = Unwrap(info);
  if (w != nullptr && !w->reported) {
    if (w->exit_active) uv_ref(w->exit_handle());
    for (Capture& c : w->cap)
      if (c.active) uv_ref(reinterpret_cast<uv_handle_t*>(&c.poll));
  }
  return info.Env().Undefined();
}

Napi::Value WatchUnref(const Napi::CallbackInfo& info) {
  Watch* w = Unwrap(info);
  if (w != nullptr && !w->reported) {
    if (w->exit_active) uv_unref(w->exit_handle());
    for (Capture& c : w->cap)
      if (c.active) uv_unref(reinterpret_cast<uv_handle_t*>(&c.poll));
  }
  return info.Env().Undefined();
}

// kill(watch, signal, mode) -> 0 or errno. mode 0: the child, 1: its
// process group, 2: the group, and SIGKILL whatever is left of the group when
// the child exits (timeouts, aborts; at once if it has exited already).
// Refused with ESRCH once the child is reaped: its pid, and so its group id,
// may name someone else by then. An exited, unreaped child (output still
// open) still pins both.
Napi::Value WatchKill(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsNumber() || !info[1].IsNumber() ||
      !info[2].IsNumber()) {
    Napi::TypeError::New(env, "noshell: kill(watch, signal, mode)")
        .ThrowAsJavaScriptException();
    return Napi::Value();
  }
  Watch* w = Unwrap(info);
  // Gone from the registry: reported and freed, so certainly reaped.
  if (w == nullptr) return Napi::Number::New(env, ESRCH);
  int sig = info[1].As<Napi::Number>().Int32Value();
  int mode = info[2].As<Napi::Number>().Int32Value();
  int err = 0;
  if (w->reaped) return Napi::Number::New(env, ESRCH);
  if (mode == 0 && w->exited) return Napi::Number::New(env, ESRCH);
  if (kill(mode != 0 ? -w->pid : w->pid, sig) != 0) err = errno;
  if (mode == 2) {
    if (w->exited)
      kill(-w->pid, SIGKILL);
    else
      w->kill_group_on_exit = true;
  }
  return Napi::Number::New(env, err);
}

// abandon(watch): stop reading captured output once the child has exited (at
// once if it has), so output held open by an escaped descendant cannot keep
// the result waiting after a timeout.
Napi::Value WatchAbandon(const Napi::CallbackInfo& info) {
  Watch* w = Unwrap(info);
  if (w != nullptr && !w->reported) {
    w->abandon = true;
    if (w->exited) {
      StopCaptures(w);
      MaybeFinish(w);
    }
  }
  return info.Env().Undefined();
}

}  // namespace noshell
