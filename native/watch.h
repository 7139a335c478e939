// Exit watching for spawned children: a pidfd polled on the libuv loop, then
// wait4() by pid for the status and rusage. Never waitpid(-1), never a SIGCHLD
// handler: libuv owns SIGCHLD and reaps only its own children.
#ifndef NOSHELL_WATCH_H_
#define NOSHELL_WATCH_H_

#include <napi.h>
#include <sys/types.h>

namespace noshell {

// Starts watching pid; on_exit(exitCode, signal, userUs, sysUs, maxRssKb) is
// called once when the child is reaped. Returns an External to pass to
// WatchRef/WatchUnref, or an empty value with a pending exception.
Napi::Value WatchChild(Napi::Env env, pid_t pid, Napi::Function on_exit);

Napi::Value WatchRef(const Napi::CallbackInfo& info);
Napi::Value WatchUnref(const Napi::CallbackInfo& info);

}  // namespace noshell

#endif  // NOSHELL_WATCH_H_
