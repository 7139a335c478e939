#include "watch.h"
#include "watch-internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <new>

#include "../core/spawn.h"
#include "../executor/executor.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

namespace noshell {


static void MaybeDelete(Watch* w) {
  // Node waits for this before it unloads the addon at environment teardown
  // (worker exit): no close callback may run after that.
  if (w->handles == 0 && w->cleanup != nullptr) {
    napi_remove_async_cleanup_hook(w->cleanup);
    w->cleanup = nullptr;
  }
  if (w->handles > 0 || !w->reported) return;
  Unregister(w);
  for (Capture& c : w->cap) free(c.data);
  noshell_runs_free(&w->runs);
  delete w;
}

static void OnHandleClosed(uv_handle_t* handle) {
  Watch* w = static_cast<Watch*>(handle->data);
  if (handle == w->exit_handle() && w->pidfd >= 0) {
    close(w->pidfd);
    w->pidfd = -1;
  }
  w->handles--;
  MaybeDelete(w);
}

static void OnCaptureClosed(uv_handle_t* handle) {
  Capture* c = static_cast<Capture*>(handle->data);
  Watch* w = static_cast<Watch*>(c->owner);
  w->handles--;
  MaybeDelete(w);
}

static void OnGraceClosed(uv_handle_t* handle) {
  Watch* w = static_cast<Watch*>(handle->data);
  w->handles--;
  MaybeDelete(w);
}

void StopGraceTimer(Watch* w) {
  if (!w->grace_timer_open) return;
  w->grace_timer_open = false;
  uv_timer_stop(&w->grace_timer);
  uv_close(reinterpret_cast<uv_handle_t*>(&w->grace_timer), OnGraceClosed);
}

static void StopExitWatch(Watch* w) {
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

static void CleanupHook(napi_async_cleanup_hook_handle handle, void* arg) {
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
  StopGraceTimer(w);
  for (Capture& c : w->cap) CaptureStop(&c);
  ReleaseJs(w);
  w->reported = true;
  MaybeDelete(w);
}

// The child is reaped only once it has exited *and* every captured stream
// has ended. Until then its zombie pins its pid and its process group id, so
// kill(-pid) after a timeout reaches the group it ran, never a reused one.
void MaybeFinish(Watch* w) {
  if (w->reported || w->cap[0].active || w->cap[1].active) return;
  if (!w->exited) {
    // The output ended first (the usual order): only now is the exit watched.
    EnsureExitWatch(w);
    return;
  }
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
  StopGraceTimer(w);
  Report(w);
}

// Past max_buffer without truncate: the caller decides what happens to the
// child (kill it, which signal).
static void NotifyOverflow(Watch* w, Capture* c) {
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
}

static void OnCaptureEnd(Capture* c) {
  Watch* w = static_cast<Watch*>(c->owner);
  NotifyOverflow(w, c);
  MaybeFinish(w);
}

static bool Capturing(const Watch* w) {
  return w->cap[0].active || w->cap[1].active;
}

// The grace is over: what the pipes hold now is read, then they are let go
// (their writers get EPIPE) and the child is reaped.
void LetOutputGo(Watch* w) {
  for (Capture& c : w->cap) {
    if (!c.active) continue;
    if (CaptureDrain(&c)) {
      w->output_cut = true;
      CaptureStop(&c);
    } else {
      NotifyOverflow(w, &c);
    }
  }
  MaybeFinish(w);
}

static void OnGrace(uv_timer_t* handle) {
  LetOutputGo(static_cast<Watch*>(handle->data));
}

// NOSHELL_EXIT_PROBE_MS after the start, the output still open: learn of the
// exit while it is.
static void OnProbe(uv_timer_t* handle) {
  Watch* w = static_cast<Watch*>(handle->data);
  if (!w->reported && !w->exited && Capturing(w)) EnsureExitWatch(w);
}

void StopCaptures(Watch* w) {
  for (Capture& c : w->cap) CaptureStop(&c);
}

// The child has exited (a zombie now, not reaped).
static void OnExited(Watch* w) {
  w->exited = true;
  StopExitWatch(w);
  // Timeout/abort: whatever is left of the group dies with the leader.
  if (w->kill_group_on_exit) kill(-w->group, SIGKILL);
  // Output held open by something that escaped the group is given up on.
  if (w->abandon) StopCaptures(w);
  StartGrace(w);
}

// Held open by someone else (a background grandchild): read for the grace,
// then let go.
void StartGrace(Watch* w) {
  if (!w->grace_held && Capturing(w) && w->grace_ms >= 0 && w->grace_timer_open) {
    if (w->grace_ms == 0) {
      uv_timer_stop(&w->grace_timer);
      LetOutputGo(w);
      return;
    }
    uv_timer_start(&w->grace_timer, OnGrace, static_cast<uint64_t>(w->grace_ms), 0);
  }
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

static void OnPidfd(uv_poll_t* handle, int status, int events) {
  (void) events;
  Watch* w = static_cast<Watch*>(handle->data);
  if (status < 0 && !HasExited(w->pid)) return;  // a poll error, not the exit
  OnExited(w);
}

static void OnTimer(uv_timer_t* handle) {
  Watch* w = static_cast<Watch*>(handle->data);
  if (HasExited(w->pid)) {
    OnExited(w);
    return;
  }
  // Fallback for kernels without pidfd_open (< 5.3): back off to 50 ms.
  if (w->delay_ms < 50) w->delay_ms *= 2;
  uv_timer_start(&w->h.timer, OnTimer, w->delay_ms, 0);
}

static void StartExitWatch(Watch* w) {
  w->exit_watch_started = true;
  // pidfd_open fds are always O_CLOEXEC. The child cannot have been reaped
  // yet (only we reap it), so its pid still names it.
  int fd = (noshell_forced & NOSHELL_FALLBACK_PIDFD)
               ? -1
               : static_cast<int>(syscall(SYS_pidfd_open, w->pid, 0));
  if (fd >= 0 && uv_poll_init(w->loop, &w->h.poll, fd) == 0) {
    w->pidfd = fd;
  } else {
    // Kernel < 5.3 (or no poll for it): poll the status on a timer instead.
    if (fd >= 0) close(fd);
    w->use_timer = true;
    uv_timer_init(w->loop, &w->h.timer);
  }
  w->h.poll.data = w;  // same offset in both members of the union
  w->handles++;
  w->exit_active = true;
  if (w->use_timer)
    uv_timer_start(&w->h.timer, OnTimer, 1, 0);
  else
    uv_poll_start(&w->h.poll, UV_READABLE, OnPidfd);
  if (w->unrefed) uv_unref(w->exit_handle());
}

void EnsureExitWatch(Watch* w) {
  if (w->exit_watch_started || w->exited || w->reported) return;
  // Usually the child is a zombie already when its output ends: then no
  // pidfd, poll or close is needed at all.
  if (HasExited(w->pid)) {
    w->exit_watch_started = true;
    OnExited(w);
    return;
  }
  StartExitWatch(w);
}

// The child cannot be watched: kill and reap it now rather than leak a
// zombie or an exec that never settles.
static void KillAndReap(pid_t pid) {
  kill(pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

Napi::Value WatchChild(Napi::Env env, const WatchRequest& req, int* error) {
  uv_loop_t* loop = nullptr;
  // -fno-exceptions: a throwing new would abort the host process.
  Watch* w = new (std::nothrow) Watch();
  if (w != nullptr) w->env = env;
  if (w == nullptr || !Register(w)) {
    delete w;
    for (int fd : req.capture_fd)
      if (fd >= 0) close(fd);
    KillAndReap(req.pid);
    *error = ENOMEM;
    return Napi::Value();
  }
  w->pid = req.pid;
  w->group = req.group > 0 ? req.group : req.pid;
  w->as_string = req.as_string;
  w->all = req.all;
  for (int i = 0; i < 2; i++) {
    w->cap[i].runs = req.all ? &w->runs : nullptr;
    w->cap[i].stream = i;
  }
  napi_create_reference(env, req.on_exit, 1, &w->on_exit);
  if (!req.on_overflow.IsEmpty() && req.on_overflow.IsFunction())
    napi_create_reference(env, req.on_overflow, 1, &w->on_overflow);
  napi_async_init(env, nullptr, Napi::String::New(env, "noshell:child"),
                  &w->async_context);

  int err = napi_get_uv_event_loop(env, &loop) == napi_ok ? 0 : UV_EINVAL;
  w->loop = loop;
  // With captured output the exit is watched once the output has ended
  // (or a kill asks for it); without, from the start.
  if (err == 0 && req.capture_fd[0] < 0 && req.capture_fd[1] < 0) StartExitWatch(w);
  for (int i = 0; i < 2; i++) {
    if (req.capture_fd[i] < 0) continue;
    if (err != 0) {
      close(req.capture_fd[i]);  // never handed to a capture
      continue;
    }
    err = CaptureStart(loop, &w->cap[i], req.capture_fd[i], req.max_buffer,
                       req.truncate, OnCaptureEnd, OnCaptureClosed, w);
    if (w->cap[i].initialized) w->handles++;
  }
  if (err != 0) {
    KillAndReap(req.pid);
    w->exited = w->reaped = w->reported = true;
    StopExitWatch(w);
    for (Capture& c : w->cap) CaptureStop(&c);
    ReleaseJs(w);
    if (w->pidfd >= 0 && w->handles == 0) close(w->pidfd);
    MaybeDelete(w);  // now, or once the capture handles have closed
    *error = -err;   // libuv errors are negative errnos on Linux
    return Napi::Value();
  }
  // With an output grace, the exit is looked for NOSHELL_EXIT_PROBE_MS in
  // while the output is still open. Without a timer, no grace: output is read
  // to its end as before.
  w->grace_ms = req.grace_ms;
  w->grace_held = req.hold_grace;
  if (w->grace_ms >= 0 && Capturing(w) && uv_timer_init(loop, &w->grace_timer) == 0) {
    w->grace_timer.data = w;
    w->grace_timer_open = true;
    w->handles++;
    uv_timer_start(&w->grace_timer, OnProbe, NOSHELL_EXIT_PROBE_MS, 0);
  }
  napi_add_async_cleanup_hook(env, CleanupHook, w, &w->cleanup);
  return Napi::Number::New(env, static_cast<double>(w->id));
}

}  // namespace noshell
