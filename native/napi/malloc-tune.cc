// mmapThreshold(bytes): glibc's malloc gives a block of `bytes` or more that
// no free chunk of its heap can serve a mapping of its own, unmapped when it
// is freed. By default the threshold follows the blocks freed (up to 32 MiB),
// so blocks of a few MiB come from the heap, and a freed one left between
// blocks still in use stays resident: at 100,000 checks `noshell run` held
// ~23 MiB of such free heap (issue 19). Setting it also stops glibc moving
// it. Process-wide: called only by commands that own their process, never
// on load. Gives true when glibc took the value; false without glibc
// (nothing done).
#include "malloc-tune.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace noshell {

Napi::Value MmapThreshold(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  // glibc refuses more than half its heap's maximum (32 MiB on 64-bit systems) itself.
  double bytes = info.Length() >= 1 && info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : -1;
  if (!(bytes >= 0 && bytes <= 2147483647.0) || bytes != static_cast<double>(static_cast<int>(bytes))) {
    if (!env.IsExceptionPending())
      Napi::TypeError::New(env, "mmapThreshold: bytes must be a whole number from 0 to 2147483647").ThrowAsJavaScriptException();
    return env.Undefined();
  }
#if defined(__GLIBC__)
  return Napi::Boolean::New(env, mallopt(M_MMAP_THRESHOLD, static_cast<int>(bytes)) == 1);
#else
  return Napi::Boolean::New(env, false);
#endif
}

}  // namespace noshell
