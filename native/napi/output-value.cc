#include "output-value.h"

#include <stdlib.h>

namespace noshell {

// Small outputs are copied into a fresh Buffer; big ones are handed over.
static const size_t kCopyBelow = 64 * 1024;

napi_value OutputValue(napi_env env, char* data, size_t len, bool as_string) {
  napi_value v;
  if (as_string && napi_create_string_utf8(env, len ? data : "", len, &v) == napi_ok) {
    free(data);
    return v;
  }
  // Bytes wanted, or too long for a JS string (TS reports that).
  if (len < kCopyBelow || data == nullptr) {
    if (napi_create_buffer_copy(env, len, len ? data : "", nullptr, &v) != napi_ok) napi_get_undefined(env, &v);
    free(data);
  } else if (napi_create_external_buffer(
                 env, len, data, [](napi_env, void* d, void*) { free(d); }, nullptr, &v) != napi_ok) {
    free(data);
    napi_get_undefined(env, &v);
  }
  return v;
}

}  // namespace noshell
