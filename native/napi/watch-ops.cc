// The calls JS makes on a watched child, by id: ref/unref, kill, abandon;
// and the process-wide id registry behind them.
#include <errno.h>
#include <signal.h>

#include <stdlib.h>
#include <uv.h>

#include "watch.h"
#include "watch-internal.h"

namespace noshell {
namespace {

// Process-wide (workers have their own envs and loop threads); each entry
// is only ever deleted by its own env's thread. An open-addressing table
// (linear probing, backward-shift deletion) in malloc'd memory: a failed
// allocation is an error the caller reports, never std::bad_alloc aborting
// the host under -fno-exceptions, and no libstdc++ newer than the glibc
// 2.28 baseline's (issue 10).
struct Slot {
  uint64_t id;  // 0: empty
  napi_env env;
  Watch* watch;
};

uv_once_t registry_once = UV_ONCE_INIT;
uv_mutex_t registry_mutex;
Slot* slots = nullptr;
size_t capacity = 0;  // a power of two, or 0
size_t used = 0;
uint64_t next_id = 1;

void InitRegistry() {
  // uv_mutex_init only fails without memory at process start; nothing works then.
  if (uv_mutex_init(&registry_mutex) != 0) abort();
}

size_t Home(uint64_t id, size_t cap) {
  // Ids are sequential: a multiplicative hash spreads them anyway.
  return static_cast<size_t>((id * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

Slot* Find(uint64_t id) {
  if (capacity == 0) return nullptr;
  for (size_t i = Home(id, capacity);; i = (i + 1) & (capacity - 1)) {
    if (slots[i].id == id) return &slots[i];
    if (slots[i].id == 0) return nullptr;
  }
}

void Insert(Slot* table, size_t cap, const Slot& entry) {
  size_t i = Home(entry.id, cap);
  while (table[i].id != 0) i = (i + 1) & (cap - 1);
  table[i] = entry;
}

// Keeps the load at most 1/2. False when out of memory.
bool Reserve() {
  if ((used + 1) * 2 <= capacity) return true;
  size_t cap = capacity == 0 ? 64 : capacity * 2;
  Slot* table = static_cast<Slot*>(calloc(cap, sizeof(Slot)));
  if (table == nullptr) return false;
  for (size_t i = 0; i < capacity; i++)
    if (slots[i].id != 0) Insert(table, cap, slots[i]);
  free(slots);
  slots = table;
  capacity = cap;
  return true;
}

void Erase(Slot* slot) {
  // Backward-shift: move later entries of the probe run into the hole so a
  // lookup never stops early at it.
  size_t hole = static_cast<size_t>(slot - slots);
  size_t i = hole;
  for (;;) {
    i = (i + 1) & (capacity - 1);
    if (slots[i].id == 0) break;
    size_t home = Home(slots[i].id, capacity);
    // Movable if its home is not within (hole, i] cyclically.
    bool in_range = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
    if (!in_range) {
      slots[hole] = slots[i];
      hole = i;
    }
  }
  slots[hole].id = 0;
  used--;
}

class Lock {
 public:
  Lock() {
    uv_once(&registry_once, InitRegistry);
    uv_mutex_lock(&registry_mutex);
  }
  ~Lock() { uv_mutex_unlock(&registry_mutex); }
};

}  // namespace

bool Register(Watch* w) {
  Lock lock;
  if (!Reserve()) return false;
  w->id = next_id++;
  Insert(slots, capacity, Slot{w->id, w->env, w});
  used++;
  return true;
}

void Unregister(Watch* w) {
  if (w->id == 0) return;
  Lock lock;
  Slot* slot = Find(w->id);
  if (slot != nullptr) Erase(slot);
}

Watch* FindWatch(napi_env env, double id) {
  if (!(id >= 1) || id > 9007199254740991.0) return nullptr;
  Lock lock;
  Slot* slot = Find(static_cast<uint64_t>(id));
  if (slot == nullptr || slot->env != env) return nullptr;
  return slot->watch;
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
    if (w->grace_timer_open) apply(reinterpret_cast<uv_handle_t*>(&w->grace_timer));
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
  // Only we reap our children, so an unreaped pid is still ours — unless
  // something else in the process reaped it (SIGCHLD ignored, a stray
  // waitpid(-1)): then the pid may be reused and is never signalled alone.
  bool running = !w->exited && !HasExited(w->pid);
  if (mode == 0) {
    if (!running) return Napi::Number::New(env, ESRCH);
    if (kill(w->pid, sig) != 0) err = errno;
  } else {
    // The group, and the child itself while it runs: a child that moved to
    // another group (setpgid, setsid) is no longer reached by -pid, and a
    // timeout must still bound it (issue 8). Until it is reaped the pid is
    // still ours. Either delivery counts as success.
    int group_err = kill(-w->group, sig) == 0 ? 0 : errno;
    if (!running)
      err = group_err;
    else if (kill(w->pid, sig) != 0 && group_err != 0)
      err = errno;
  }
  if (mode == 2) {
    if (w->exited) {
      kill(-w->group, SIGKILL);
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

// cutOutput(watch) -> whether the child had exited (seen by the watch) with
// an output grace running: its output is then let go now, as when the grace
// ends. A timeout that comes due in the grace does this instead of killing:
// the child ended on its own.
Napi::Value WatchCutOutput(const Napi::CallbackInfo& info) {
  Watch* w = Unwrap(info);
  bool cut = w != nullptr && !w->reported && SeenExited(w) && w->grace_ms >= 0 &&
             (w->cap[0].active || w->cap[1].active);
  if (cut) LetOutputGo(w);
  return Napi::Boolean::New(info.Env(), cut);
}

// releaseGrace(watch): a held output grace may start: now if the child has
// exited (as seen by the watch), else at its exit.
Napi::Value WatchReleaseGrace(const Napi::CallbackInfo& info) {
  Watch* w = Unwrap(info);
  if (w != nullptr && !w->reported && w->grace_held) {
    w->grace_held = false;
    if (w->exited) StartGrace(w);
  }
  return info.Env().Undefined();
}

}  // namespace noshell
