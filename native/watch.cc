#include "watch.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

namespace noshell {
namespace {

// Owned by neither side alone: freed when both the uv handle is closed and
// the JS External is finalized, so a late ref()/unref() never touches freed
// memory.
struct Watch {
  union {
    uv_poll_t poll;
    uv_timer_t timer;
  } h;
  bool use_timer = false;
  bool active = false;  // handle open and not yet reported
  bool closed = false;  // uv_close callback ran
  bool js_gone = false; // External finalized
  unsigned delay_ms = 1;
  napi_env env = nullptr;
  pid_t pid = -1;
  int pidfd = -1;
  napi_ref callback = nullptr;
  napi_async_context async_context = nullptr;

  uv_handle_t* handle() { return reinterpret_cast<uv_handle_t*>(&h); }
};

void MaybeDelete(Watch* w) {
  if (w->closed && w->js_gone) delete w;
}

void OnClose(uv_handle_t* handle) {
  Watch* w = static_cast<Watch*>(handle->data);
  if (w->pidfd >= 0) close(w->pidfd);
  w->pidfd = -1;
  w->closed = true;
  MaybeDelete(w);
}

void CloseHandle(Watch* w) {
  if (!w->active) return;
  w->active = false;
  if (w->use_timer)
    uv_timer_stop(&w->h.timer);
  else
    uv_poll_stop(&w->h.poll);
  uv_close(w->handle(), OnClose);
}

void ReleaseJs(Watch* w) {
  if (w->callback != nullptr) napi_delete_reference(w->env, w->callback);
  if (w->async_context != nullptr)
    napi_async_destroy(w->env, w->async_context);
  w->callback = nullptr;
  w->async_context = nullptr;
}

void CleanupHook(void* arg) {
  // The environment is going away (worker exit): stop watching, call nothing.
  Watch* w = static_cast<Watch*>(arg);
  CloseHandle(w);
  ReleaseJs(w);
}

void Report(Watch* w, int status, const struct rusage& ru, bool known) {
  napi_env env = w->env;
  napi_handle_scope scope;
  double code = -1, sig = 0;
  if (known && WIFEXITED(status)) code = WEXITSTATUS(status);
  if (known && WIFSIGNALED(status)) sig = WTERMSIG(status);

  CloseHandle(w);
  napi_remove_env_cleanup_hook(env, CleanupHook, w);
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;

  napi_value argv[5], fn, recv, result;
  napi_create_double(env, code, &argv[0]);
  napi_create_double(env, sig, &argv[1]);
  napi_create_double(env, ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec,
                     &argv[2]);
  napi_create_double(env, ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec,
                     &argv[3]);
  napi_create_double(env, static_cast<double>(ru.ru_maxrss), &argv[4]);
  napi_get_reference_value(env, w->callback, &fn);
  napi_get_global(env, &recv);
  napi_async_context ctx = w->async_context;
  napi_ref cb = w->callback;
  w->callback = nullptr;
  w->async_context = nullptr;
  // MakeCallback drains nextTicks and microtasks, like a libuv callback in
  // Node's own child_process.
  if (napi_make_callback(env, ctx, recv, fn, 5, argv, &result) ==
      napi_pending_exception) {
    napi_value err;
    napi_get_and_clear_last_exception(env, &err);
    napi_fatal_exception(env, err);
  }
  napi_delete_reference(env, cb);
  napi_async_destroy(env, ctx);
  napi_close_handle_scope(env, scope);
}

// Returns true once the child was reaped (or is gone) and reported.
bool TryReap(Watch* w) {
  int status = 0;
  struct rusage ru = {};
  pid_t r;
  do
    r = wait4(w->pid, &status, WNOHANG, &ru);
  while (r < 0 && errno == EINTR);
  if (r == 0) return false;
  // r < 0 (ECHILD): someone else reaped it (SIGCHLD set to SIG_IGN, or a
  // waitpid(-1) elsewhere in the process). Its status is lost; say so.
  Report(w, status, ru, r == w->pid);
  return true;
}

void OnPoll(uv_poll_t* handle, int status, int events) {
  (void) status;
  (void) events;
  TryReap(static_cast<Watch*>(handle->data));
}

void OnTimer(uv_timer_t* handle) {
  Watch* w = static_cast<Watch*>(handle->data);
  if (TryReap(w)) return;
  // Fallback for kernels without pidfd_open (< 5.3): back off to 50 ms.
  if (w->delay_ms < 50) w->delay_ms *= 2;
  uv_timer_start(&w->h.timer, OnTimer, w->delay_ms, 0);
}

void Finalize(napi_env env, void* data, void* hint) {
  (void) env;
  (void) hint;
  Watch* w = static_cast<Watch*>(data);
  w->js_gone = true;
  MaybeDelete(w);
}

Watch* Unwrap(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsExternal()) return nullptr;
  return info[0].As<Napi::External<Watch>>().Data();
}

}  // namespace

Napi::Value WatchChild(Napi::Env env, pid_t pid, Napi::Function on_exit) {
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok) {
    Napi::Error::New(env, "noshell: no libuv loop").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  Watch* w = new Watch();
  w->env = env;
  w->pid = pid;
  napi_create_reference(env, on_exit, 1, &w->callback);
  napi_async_init(env, nullptr, Napi::String::New(env, "noshell:child"),
                  &w->async_context);

  // pidfd_open fds are always O_CLOEXEC. The child cannot have been reaped
  // yet (only we reap it), so its pid still names it.
  w->pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  int err;
  if (w->pidfd >= 0) {
    err = uv_poll_init(loop, &w->h.poll, w->pidfd);
  } else {
    w->use_timer = true;
    err = uv_timer_init(loop, &w->h.timer);
  }
  if (err == 0) {
    w->h.poll.data = w;  // same offset in both members of the union
    w->active = true;
    err = w->use_timer ? uv_timer_start(&w->h.timer, OnTimer, 1, 0)
                       : uv_poll_start(&w->h.poll, UV_READABLE, OnPoll);
  }
  if (err != 0) {
    // Cannot watch it: kill and reap now rather than leak a zombie.
    kill(pid, SIGKILL);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    ReleaseJs(w);
    w->js_gone = true;
    if (w->active) {
      CloseHandle(w);  // OnClose closes the pidfd and frees w
    } else {
      if (w->pidfd >= 0) close(w->pidfd);
      delete w;
    }
    Napi::Error::New(env, std::string("noshell: cannot watch child: ") +
                              uv_strerror(err))
        .ThrowAsJavaScriptException();
    return Napi::Value();
  }
  napi_add_env_cleanup_hook(env, CleanupHook, w);

  napi_value ext;
  napi_create_external(env, w, Finalize, nullptr, &ext);
  return Napi::Value(env, ext);
}

Napi::Value WatchRef(const Napi::CallbackInfo& info) {
  Watch* w = Unwrap(info);
  if (w != nullptr && w->active) uv_ref(w->handle());
  return info.Env().Undefined();
}

Napi::Value WatchUnref(const Napi::CallbackInfo& info) {
  Watch* w = Unwrap(info);
  if (w != nullptr && w->active) uv_unref(w->handle());
  return info.Env().Undefined();
}

}  // namespace noshell
