// Internal to the exit watch (watch.cc) and its JS-facing calls
// (watch-ops.cc): the per-child state and the id registry.
#ifndef NOSHELL_WATCH_INTERNAL_H_
#define NOSHELL_WATCH_INTERNAL_H_

#include <node_api.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <uv.h>

#include "capture.h"

namespace noshell {

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
  bool exit_watch_started = false;
  bool unrefed = false;     // unref() asked for: applies to handles started later
  uv_loop_t* loop = nullptr;
  bool exited = false;      // seen to exit; a zombie until reaped
  bool reaped = false;      // wait4() done: the pid is no longer ours
  bool abandon = false;     // stop reading output once the child has exited
  bool reported = false;
  uint64_t id = 0;           // key in the registry; what JS holds
  bool as_string = false;
  bool kill_group_on_exit = false; // timeout/abort: SIGKILL the rest at exit
  // Output grace (executor.h's output_grace_ms): -1 none. The timer first
  // probes for the exit (NOSHELL_EXIT_PROBE_MS), then times the grace.
  int64_t grace_ms = -1;
  bool grace_held = false;          // WatchRequest.hold_grace, until released
  bool grace_timer_open = false;    // grace_timer initialized and not closing
  bool output_cut = false;          // the grace ended with a pipe still open
  bool all = false;                 // exec's `all`: the order of stdout and stderr
  noshell_runs_t runs = {};
  uv_timer_t grace_timer;
  napi_async_cleanup_hook_handle cleanup = nullptr;
  int handles = 0;          // uv handles not yet closed
  unsigned delay_ms = 1;
  napi_env env = nullptr;
  pid_t pid = -1;
  // Its process group: its pid, or the group it joined (a pipeline's first
  // stage's). Group kills reach it; its zombie pins the id until reaped.
  pid_t group = -1;
  int pidfd = -1;
  int status = 0;
  bool status_known = false;
  struct rusage ru = {};
  napi_ref on_exit = nullptr;
  napi_ref on_overflow = nullptr;
  napi_async_context async_context = nullptr;

  uv_handle_t* exit_handle() { return reinterpret_cast<uv_handle_t*>(&h); }
};

// Gives w an id and makes it findable from JS. False when out of memory.
bool Register(Watch* w);
void Unregister(Watch* w);
// The live watch with that id in env, or nullptr (freed, or another env's).
Watch* FindWatch(napi_env env, double id);

// Drops the JS callbacks and async context (after the report, or at teardown).
void ReleaseJs(Watch* w);
// Calls fn(argv) through MakeCallback (watch-report.cc).
void CallJs(Watch* w, napi_ref fn_ref, size_t argc, napi_value* argv);
// Hands status, rusage and output to on_exit, once (watch-report.cc).
void Report(Watch* w);
// Waits for pid on a detached thread (reap-later.cc).
void ReapLater(pid_t pid);

// Whether pid has exited, without reaping it; ECHILD (someone else reaped
// it) counts as exited.
bool HasExited(pid_t pid);

// Starts watching for the exit if nothing does yet (noticing one that
// already happened without any handle).
void EnsureExitWatch(Watch* w);

// Stops reading captured output (no on_end).
void StopCaptures(Watch* w);
// Closes the output-grace timer, if open.
void StopGraceTimer(Watch* w);
// The output grace is over (or cut short): what the pipes hold now is read,
// then they are let go (output_cut if one was still open), and the child is
// reaped.
void LetOutputGo(Watch* w);
// The child has exited: its output grace starts (unless held).
void StartGrace(Watch* w);
// Whether the child was seen to exit (the watch's view).
inline bool SeenExited(const Watch* w) { return w->exited; }
// Reaps and reports once the child has exited and its output has ended.
void MaybeFinish(Watch* w);

}  // namespace noshell

#endif  // NOSHELL_WATCH_INTERNAL_H_
