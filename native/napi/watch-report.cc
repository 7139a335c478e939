// Handing a finished child to JS: its status, rusage and captured output in
// one call through MakeCallback.
#include <stdlib.h>
#include <sys/wait.h>

#include "watch-internal.h"

namespace noshell {

// Small outputs are copied into a fresh Buffer; big ones are handed over.
static const size_t kCopyBelow = 64 * 1024;

// Calls fn(argv) through MakeCallback, so nextTicks and microtasks drain as
// after any libuv callback in Node; an exception goes to 'uncaughtException'.
void CallJs(Watch* w, napi_ref fn_ref, size_t argc, napi_value* argv) {
  napi_value fn, recv, result;
  napi_get_reference_value(w->env, fn_ref, &fn);
  napi_get_global(w->env, &recv);
  if (napi_make_callback(w->env, w->async_context, recv, fn, argc, argv,
                         &result) == napi_pending_exception) {
    napi_value err;
    napi_get_and_clear_last_exception(w->env, &err);
    napi_fatal_exception(w->env, err);
  }
}

static napi_value Output(Watch* w, Capture* c, bool captured) {
  napi_env env = w->env;
  napi_value v;
  if (!captured) {
    napi_get_undefined(env, &v);
    return v;
  }
  size_t len;
  char* data = CaptureTake(c, &len);
  if (w->as_string &&
      napi_create_string_utf8(env, len ? data : "", len, &v) == napi_ok) {
    free(data);
    return v;
  }
  // Bytes wanted, or too long for a JS string (TS reports that).
  if (len < kCopyBelow || data == nullptr) {
    napi_create_buffer_copy(env, len, len ? data : "", nullptr, &v);
    free(data);
  } else if (napi_create_external_buffer(
                 env, len, data,
                 [](napi_env, void* d, void*) { free(d); }, nullptr,
                 &v) != napi_ok) {
    free(data);
    napi_get_undefined(env, &v);
  }
  return v;
}

void Report(Watch* w) {
  w->reported = true;
  napi_env env = w->env;
  double code = -1, sig = 0;
  if (w->status_known && WIFEXITED(w->status)) code = WEXITSTATUS(w->status);
  if (w->status_known && WIFSIGNALED(w->status)) sig = WTERMSIG(w->status);
  const struct rusage& ru = w->ru;

  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value argv[8];
  napi_create_double(env, code, &argv[0]);
  napi_create_double(env, sig, &argv[1]);
  napi_create_double(env, ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec, &argv[2]);
  napi_create_double(env, ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec, &argv[3]);
  napi_create_double(env, static_cast<double>(ru.ru_maxrss), &argv[4]);
  argv[5] = Output(w, &w->cap[0], w->cap[0].on_end != nullptr);
  argv[6] = Output(w, &w->cap[1], w->cap[1].on_end != nullptr);
  napi_create_int32(env, (w->cap[0].overflow ? 1 : 0) | (w->cap[1].overflow ? 2 : 0) | (w->output_cut ? 4 : 0),
                    &argv[7]);
  napi_ref fn = w->on_exit;
  w->on_exit = nullptr;
  CallJs(w, fn, 8, argv);
  napi_delete_reference(env, fn);
  ReleaseJs(w);
  napi_close_handle_scope(env, scope);
}

}  // namespace noshell
