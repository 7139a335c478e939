// Handing a finished child to JS: its status, rusage and captured output in
// one call through MakeCallback.
#include <stdlib.h>
#include <sys/wait.h>

#include "output-value.h"
#include "watch-internal.h"

namespace noshell {

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
  napi_value v;
  if (!captured) {
    napi_get_undefined(w->env, &v);
    return v;
  }
  size_t len;
  char* data = CaptureTake(c, &len);
  return OutputValue(w->env, data, len, w->as_string);
}

// exec's `all`: both captured streams as they came, before they are handed
// over; undefined without `all` or memory for it.
static napi_value AllOutput(Watch* w) {
  size_t len = 0;
  char* data = w->all ? noshell_runs_interleave(&w->runs, w->cap[0].data, w->cap[0].len, w->cap[1].data,
                                                w->cap[1].len, &len)
                      : nullptr;
  if (data == nullptr) {
    napi_value v;
    napi_get_undefined(w->env, &v);
    return v;
  }
  return OutputValue(w->env, data, len, w->as_string);
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
  napi_value argv[9];
  napi_create_double(env, code, &argv[0]);
  napi_create_double(env, sig, &argv[1]);
  napi_create_double(env, ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec, &argv[2]);
  napi_create_double(env, ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec, &argv[3]);
  napi_create_double(env, static_cast<double>(ru.ru_maxrss), &argv[4]);
  argv[8] = AllOutput(w);
  argv[5] = Output(w, &w->cap[0], w->cap[0].on_end != nullptr);
  argv[6] = Output(w, &w->cap[1], w->cap[1].on_end != nullptr);
  napi_create_int32(env, (w->cap[0].overflow ? 1 : 0) | (w->cap[1].overflow ? 2 : 0) | (w->output_cut ? 4 : 0),
                    &argv[7]);
  napi_ref fn = w->on_exit;
  w->on_exit = nullptr;
  CallJs(w, fn, 9, argv);
  napi_delete_reference(env, fn);
  ReleaseJs(w);
  napi_close_handle_scope(env, scope);
}

}  // namespace noshell
