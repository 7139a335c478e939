// The executor's N-API glue: one executor thread per Node environment,
// started by the first buffered exec, stopped at the environment's teardown.
#ifndef NOSHELL_EXECUTOR_ADDON_H_
#define NOSHELL_EXECUTOR_ADDON_H_

#include <napi.h>

namespace noshell {

Napi::Value ExecInit(const Napi::CallbackInfo& info);
Napi::Value ExecSubmit(const Napi::CallbackInfo& info);
Napi::Value ExecCancel(const Napi::CallbackInfo& info);
Napi::Value ExecShutdown(const Napi::CallbackInfo& info);
Napi::Value ExecSync(const Napi::CallbackInfo& info);
Napi::Value ExecStats(const Napi::CallbackInfo& info);

}  // namespace noshell

#endif  // NOSHELL_EXECUTOR_ADDON_H_
