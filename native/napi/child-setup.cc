#include "child-setup.h"

#include <stdlib.h>

#include "js-strings.h"

namespace noshell {
namespace {

// A whole number in [lo, hi] (NaN and fractions are not).
bool WholeIn(double v, double lo, double hi) {
  return v >= lo && v <= hi && v == static_cast<double>(static_cast<long long>(v));
}

// Limits are whole numbers up to 2^53 (JS numbers); -1 and -2 are the two
// special values. Anything else was refused in TypeScript already.
bool LimitValue(double v, unsigned long long* out) {
  if (v == -1) {
    *out = NOSHELL_RLIM_INFINITY;
    return true;
  }
  if (v == -2) {
    *out = NOSHELL_RLIM_KEEP;
    return true;
  }
  if (!WholeIn(v, 0, 9007199254740992.0)) return false;
  *out = static_cast<unsigned long long>(v);
  return true;
}

bool Fail(Napi::Env env, const char* message) {
  Napi::TypeError::New(env, message).ThrowAsJavaScriptException();
  return false;
}

}  // namespace

bool LoadChildSetup(Napi::Env env, const Napi::Value& setup, const Napi::Value& cgroup,
                    noshell_spawn_t* req, noshell_rlimit_t** rlimits, char** cgroup_copy) {
  *rlimits = nullptr;
  *cgroup_copy = nullptr;
  if (!cgroup.IsNull() && !cgroup.IsUndefined()) {
    OwnedString s;
    if (!cgroup.IsString() || !s.Copy(env, cgroup)) return Fail(env, "noshell: bad cgroup");
    *cgroup_copy = s.Release();
    req->cgroup = *cgroup_copy;
  }
  if (setup.IsNull() || setup.IsUndefined()) return true;
  if (!setup.IsTypedArray() || setup.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
    free(*cgroup_copy);
    *cgroup_copy = nullptr;
    return Fail(env, "noshell: setup must be a Float64Array");
  }
  Napi::Float64Array a = setup.As<Napi::Float64Array>();
  size_t len = a.ElementLength();
  double n = len >= 3 ? a[2] : -1;
  if (len < 3 || !WholeIn(n, 0, 64) || len != 3 + 3 * static_cast<size_t>(n) || !WholeIn(a[0], 0, 64) ||
      !WholeIn(a[1], -20, 19)) {
    free(*cgroup_copy);
    *cgroup_copy = nullptr;
    return Fail(env, "noshell: bad setup array");
  }
  req->death_signal = static_cast<int>(a[0]);
  req->nice = static_cast<int>(a[1]);
  size_t count = static_cast<size_t>(n);
  if (count == 0) return true;
  noshell_rlimit_t* list = static_cast<noshell_rlimit_t*>(malloc(count * sizeof(noshell_rlimit_t)));
  if (list == nullptr) {
    free(*cgroup_copy);
    *cgroup_copy = nullptr;
    return Fail(env, "noshell: out of memory for rlimits");
  }
  for (size_t i = 0; i < count; i++) {
    double resource = a[3 + i * 3];
    list[i].resource = static_cast<int>(resource);
    if (!WholeIn(resource, 0, 63) || !LimitValue(a[4 + i * 3], &list[i].soft) ||
        !LimitValue(a[5 + i * 3], &list[i].hard)) {
      free(list);
      free(*cgroup_copy);
      *cgroup_copy = nullptr;
      return Fail(env, "noshell: bad rlimit in setup");
    }
  }
  *rlimits = list;
  req->rlimits = list;
  req->nrlimits = count;
  return true;
}

}  // namespace noshell
