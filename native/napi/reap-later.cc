// Children still running when their environment goes away (worker exit):
// nobody's loop will reap them, so a detached thread does.
//
// No std::thread or std::call_once here: under -fno-exceptions their
// failures (EAGAIN at RLIMIT_NPROC, say) call std::terminate and abort the
// whole host process (issue 8). libuv's threads report errors as values and,
// unlike glibc's pthread_create@GLIBC_2.34, keep the prebuilt addon loadable
// on glibc 2.28 (issue 10). The addon is linked -z nodelete, so this thread's
// code stays mapped after Node unloads the worker that started it.
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "watch.h"
#include "watch-internal.h"

namespace noshell {

// libuv 1.46 has no uv_thread_detach, and a reference to pthread_detach
// would need GLIBC_2.34: the glue finds it at load (addon.cc).
typedef int (*DetachFn)(pthread_t);
static DetachFn thread_detach = nullptr;

void SetThreadDetach(void* fn) {
  thread_detach = reinterpret_cast<DetachFn>(fn);
}

static void Reap(pid_t pid) {
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

static void ReapThread(void* arg) {
  Reap(static_cast<pid_t>(reinterpret_cast<intptr_t>(arg)));
}

void ReapLater(pid_t pid) {
  // The thread inherits the mask it is created with: every signal blocked,
  // so process-directed ones go to Node's threads, not to this waiter.
  // (Raw syscall: pthread_sigmask is GLIBC_2.32.)
  sigset_t all, old;
  memset(&all, 0xff, sizeof(all));
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, _NSIG / 8);
  uv_thread_t thread;
  uv_thread_options_t opts;
  opts.flags = UV_THREAD_HAS_STACK_SIZE;
  opts.stack_size = 64 * 1024;  // it only waits
  int err = uv_thread_create_ex(&thread, &opts, ReapThread,
                                reinterpret_cast<void*>(static_cast<intptr_t>(pid)));
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, nullptr, _NSIG / 8);
  if (err == 0) {
    if (thread_detach != nullptr) thread_detach(thread);
    return;
  }
  // No thread to be had (EAGAIN: RLIMIT_NPROC or the thread limit): the
  // child is killed and reaped here instead. The environment is being torn
  // down anyway; leaving it running would leave a zombie nobody reaps.
  kill(pid, SIGKILL);
  Reap(pid);
}

}  // namespace noshell
