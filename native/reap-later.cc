// Children still running when their environment goes away (worker exit):
// nobody's loop will reap them, so a detached thread does.
#include <dlfcn.h>
#include <errno.h>
#include <sys/wait.h>

#include <mutex>
#include <thread>

#include "watch-internal.h"

namespace noshell {

static void PinAddon() {
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

}  // namespace noshell
