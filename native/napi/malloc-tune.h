// mmapThreshold(): glibc's malloc threshold for blocks of their own, fixed
// by a long-running command (src/daemon/malloc-threshold.ts).
#ifndef NOSHELL_MALLOC_TUNE_H_
#define NOSHELL_MALLOC_TUNE_H_

#include <napi.h>

namespace noshell {

Napi::Value MmapThreshold(const Napi::CallbackInfo& info);

}  // namespace noshell

#endif  // NOSHELL_MALLOC_TUNE_H_
