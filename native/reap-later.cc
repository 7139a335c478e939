// Children still running when their environment goes away (worker exit):
// nobody's loop will reap them, so a detached thread does.
//
// No std::thread or std::call_once here: under -fno-exceptions their
// failures (EAGAIN at RLIMIT_NPROC, say) call std::terminate and abort the
// whole host process (issue 8). pthreads report errors as values.
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>

#include "watch-internal.h"

namespace noshell {

static pthread_once_t pin_once = PTHREAD_ONCE_INIT;

static void PinAddon() {
  // The reaper thread runs code of this library, which Node unloads with the
  // worker's environment: keep it mapped for the life of the process.
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&PinAddon), &info) != 0 &&
      info.dli_fname != nullptr)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

static void Reap(pid_t pid) {
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

static void* ReapThread(void* arg) {
  Reap(static_cast<pid_t>(reinterpret_cast<intptr_t>(arg)));
  return nullptr;
}

void ReapLater(pid_t pid) {
  pthread_once(&pin_once, PinAddon);
  pthread_attr_t attr;
  pthread_t thread;
  int err = pthread_attr_init(&attr);
  if (err == 0) {
    // It only waits: the smallest stack that is safe for waitpid.
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    // The thread inherits the mask it is created with: every signal blocked,
    // so process-directed ones go to Node's threads, not to this waiter.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    err = pthread_create(&thread, &attr, ReapThread,
                         reinterpret_cast<void*>(static_cast<intptr_t>(pid)));
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    pthread_attr_destroy(&attr);
  }
  if (err == 0) return;
  // No thread to be had (EAGAIN: RLIMIT_NPROC or the thread limit): the
  // child is killed and reaped here instead. The environment is being torn
  // down anyway; leaving it running would leave a zombie nobody reaps.
  kill(pid, SIGKILL);
  Reap(pid);
}

}  // namespace noshell
