// Exit watching for spawned children: a pidfd polled on the libuv loop, then
// wait4() by pid for the status and rusage. Never waitpid(-1), never a SIGCHLD
// handler: libuv owns SIGCHLD and reaps only its own children.
#ifndef NOSHELL_WATCH_H_
#define NOSHELL_WATCH_H_

#include <napi.h>
#include <stddef.h>
#include <sys/types.h>

namespace noshell {

struct WatchRequest {
  pid_t pid;
  // The process group the child is in when it joined one (a pipeline's
  // first stage's); 0: the child leads its own (its pid).
  pid_t group = 0;
  // Pipe read ends to capture natively (stdout, stderr), or -1. Owned by the
  // watch from here on, whatever happens.
  int capture_fd[2];
  size_t max_buffer;
  bool as_string;  // captured output as utf8 strings rather than Buffers
  bool truncate;   // past max_buffer: drop the rest, keep reading, no overflow call
  bool all = false;  // also both captured streams interleaved as they came (on_exit's 9th argument)
  // Once the child has exited, ms its captured pipes are still read while
  // something else holds them open; then they are let go. -1: to their end.
  int64_t grace_ms = -1;
  // The grace does not start at the exit but at WatchReleaseGrace (or the
  // exit, if that comes later): a pipeline's last stage, whose output the
  // other stages may still write to.
  bool hold_grace = false;
  // on_exit(exitCode, signal, userUs, sysUs, maxRssKb, stdout, stderr,
  // overflowed): once, after the child is reaped and every captured stream
  // has ended. overflowed: bit 1 stdout, bit 2 stderr went past max_buffer,
  // bit 4 the output grace ended with a pipe still held open.
  Napi::Function on_exit;
  // on_overflow(1 | 2): a captured stream went past max_buffer (optional).
  Napi::Value on_overflow;
};

// Returns the watch's id (a number) for WatchRef/WatchUnref/WatchKill/
// WatchAbandon, or an empty value (no exception) with *error set to an errno
// when its output or exit cannot be watched: the child is then killed and
// reaped, and its captured fds closed.
Napi::Value WatchChild(Napi::Env env, const WatchRequest& req, int* error);

// pthread_detach as found at load (nullptr: leave finished reaper threads
// unjoined). See reap-later.cc.
void SetThreadDetach(void* fn);

Napi::Value WatchRef(const Napi::CallbackInfo& info);
Napi::Value WatchUnref(const Napi::CallbackInfo& info);
Napi::Value WatchKill(const Napi::CallbackInfo& info);
Napi::Value WatchAbandon(const Napi::CallbackInfo& info);
Napi::Value WatchCutOutput(const Napi::CallbackInfo& info);
Napi::Value WatchReleaseGrace(const Napi::CallbackInfo& info);

}  // namespace noshell

#endif  // NOSHELL_WATCH_H_
