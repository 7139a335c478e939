// The calls JS makes on a watched child, by id: ref/unref, kill, abandon;
// and the process-wide id registry behind them.
#include <errno.h>
#include <signal.h>

#include <mutex>
#include <unordered_map>
#include <utility>

#include "watch.h"
#include "watch-internal.h"

namespace noshell {
namespace {

// Process-wide (workers have their own envs and loop threads); each entry
// is only ever deleted by its own env's thread.
std::mutex registry_mutex;
std::unordered_map<uint64_t, std::pair<napi_env, Watch*>> registry;
uint64_t next_id = 1;

}  // namespace

void Register(Watch* w) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  w->id = next_id++;
  registry.emplace(w->id, std::make_pair(w->env, w));
}

void Unregister(Watch* w) {
  if (w->id == 0) return;
  std::lock_guard<std::mutex> lock(registry_mutex);
  registry.erase(w->id);
}

Watch* FindWatch(napi_env env, double id) {
  if (!(id >= 1)) return nullptr;
  std::lock_guard<std::mutex> lock(registry_mutex);
  auto it = registry.find(static_cast<uint64_t>(id));
  if (it == registry.end() || it->second.first != env) return nullptr;
  return it->second.second;
}

static Watch* Unwrap(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsNumber()) return nullptr;
  return FindWatch(info.Env(), info[0].As<Napi::Number>().DoubleValue());
}

// Applies ref/unref to every handle the watch has open, and remembers it
// for the exit watch if that starts later.
static Napi::Value SetRef(const Napi::CallbackInfo& info, bool ref) {
  Watch* w = Unwrap(info);
  if (w != nullptr && !w->reported) {
    void (*apply)(uv_handle_t*) = ref ? uv_ref : uv_unref;
    w->unrefed = !ref;
    if (w->exit_active) apply(w->exit_handle());
    for (Capture& c : w->cap)
      if (c.active) apply(c.handle());
  }
  return info.Env().Undefined();
}

Napi::Value WatchRef(const Napi::CallbackInfo& info) {
  return SetRef(info, true);
}

Napi::Value WatchUnref(const Napi::CallbackInfo& info) {
  return SetRef(info, false);
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
  if (mode == 0) {
    if (kill(w->pid, sig) != 0) err = errno;
  } else {
    // The group, and the child itself while it runs: a child that moved to
    // another group (setpgid, setsid) is no longer reached by -pid, and a
    // timeout must still bound it (issue 8). Until it is reaped the pid is
    // still ours. Either delivery counts as success.
    int group_err = kill(-w->pid, sig) == 0 ? 0 : errno;
    if (w->exited)
      err = group_err;
    else if (kill(w->pid, sig) != 0 && group_err != 0)
      err = errno;
  }
  if (mode == 2) {
    if (w->exited) {
      kill(-w->pid, SIGKILL);
    } else {
      w->kill_group_on_exit = true;
      // The exit must be noticed while output may still be open.
      EnsureExitWatch(w);
    }
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
    EnsureExitWatch(w);
    if (w->exited) {
      StopCaptures(w);
      MaybeFinish(w);
    }
  }
  return info.Env().Undefined();
}

}  // namespace noshell
