#include "child-setup.h"

#include <stdlib.h>
#include <string.h>

#include <vector>

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

void FreeChildSetup(ChildSetupMemory* m) {
  free(m->rlimits);
  free(m->cgroup);
  free(m->redirects);
  m->rlimits = nullptr;
  m->cgroup = nullptr;
  m->redirects = nullptr;
}

namespace {

// [fd, kind, oflags, src, path | null] × m into one malloc'd block.
bool LoadRedirects(Napi::Env env, const Napi::Value& value, noshell_spawn_t* req, ChildSetupMemory* out) {
  if (value.IsNull() || value.IsUndefined()) return true;
  if (!value.IsArray()) return Fail(env, "noshell: redirects must be an array");
  Napi::Array a = value.As<Napi::Array>();
  uint32_t len = a.Length();
  if (len % 5 != 0 || len / 5 > 4096) return Fail(env, "noshell: bad redirects array");
  size_t count = len / 5;
  if (count == 0) return true;
  std::vector<OwnedString> paths(count);
  size_t bytes = count * sizeof(noshell_redirect_t);
  for (size_t i = 0; i < count; i++) {
    Napi::Value fd = a[static_cast<uint32_t>(i * 5)], kind = a[static_cast<uint32_t>(i * 5 + 1)],
                oflags = a[static_cast<uint32_t>(i * 5 + 2)], src = a[static_cast<uint32_t>(i * 5 + 3)],
                path = a[static_cast<uint32_t>(i * 5 + 4)];
    if (!fd.IsNumber() || !kind.IsNumber() || !oflags.IsNumber() || !src.IsNumber() ||
        !WholeIn(fd.As<Napi::Number>().DoubleValue(), 0, 9) ||
        !WholeIn(kind.As<Napi::Number>().DoubleValue(), 0, 2) ||
        !WholeIn(oflags.As<Napi::Number>().DoubleValue(), 0, 2147483647.0) ||
        !WholeIn(src.As<Napi::Number>().DoubleValue(), 0, 9))
      return Fail(env, "noshell: bad redirect in redirects");
    bool open = kind.As<Napi::Number>().Int32Value() == NOSHELL_REDIRECT_OPEN;
    if (open) {
      if (!path.IsString() || !paths[i].Copy(env, path)) return Fail(env, "noshell: bad redirect path");
      bytes += strlen(paths[i].p) + 1;
    }
  }
  char* block = static_cast<char*>(malloc(bytes));
  if (block == nullptr) return Fail(env, "noshell: out of memory for redirects");
  noshell_redirect_t* list = reinterpret_cast<noshell_redirect_t*>(block);
  char* text = block + count * sizeof(noshell_redirect_t);
  for (size_t i = 0; i < count; i++) {
    noshell_redirect_t* r = &list[i];
    r->fd = a.Get(static_cast<uint32_t>(i * 5)).As<Napi::Number>().Int32Value();
    r->kind = static_cast<noshell_redirect_kind_t>(a.Get(static_cast<uint32_t>(i * 5 + 1)).As<Napi::Number>().Int32Value());
    r->oflags = a.Get(static_cast<uint32_t>(i * 5 + 2)).As<Napi::Number>().Int32Value();
    r->src = a.Get(static_cast<uint32_t>(i * 5 + 3)).As<Napi::Number>().Int32Value();
    r->path = nullptr;
    if (paths[i].p != nullptr) {
      size_t n = strlen(paths[i].p) + 1;
      memcpy(text, paths[i].p, n);
      r->path = text;
      text += n;
    }
  }
  out->redirects = list;
  req->redirects = list;
  req->nredirects = count;
  return true;
}

}  // namespace

bool LoadChildSetup(Napi::Env env, const Napi::Value& setup, const Napi::Value& cgroup,
                    const Napi::Value& redirects, noshell_spawn_t* req, ChildSetupMemory* out) {
  *out = ChildSetupMemory();
  if (!cgroup.IsNull() && !cgroup.IsUndefined()) {
    OwnedString s;
    if (!cgroup.IsString() || !s.Copy(env, cgroup)) return Fail(env, "noshell: bad cgroup");
    out->cgroup = s.Release();
    req->cgroup = out->cgroup;
  }
  if (!LoadRedirects(env, redirects, req, out)) {
    FreeChildSetup(out);
    return false;
  }
  if (setup.IsNull() || setup.IsUndefined()) return true;
  if (!setup.IsTypedArray() || setup.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array) {
    FreeChildSetup(out);
    return Fail(env, "noshell: setup must be a Float64Array");
  }
  Napi::Float64Array a = setup.As<Napi::Float64Array>();
  size_t len = a.ElementLength();
  double n = len >= 4 ? a[3] : -1;
  if (len < 4 || !WholeIn(n, 0, 64) || len != 4 + 3 * static_cast<size_t>(n) || !WholeIn(a[0], 0, 64) ||
      !WholeIn(a[1], -20, 19) || !WholeIn(a[2], 0, 2147483647.0)) {
    FreeChildSetup(out);
    return Fail(env, "noshell: bad setup array");
  }
  req->death_signal = static_cast<int>(a[0]);
  req->nice = static_cast<int>(a[1]);
  req->pgid = static_cast<pid_t>(a[2]);
  size_t count = static_cast<size_t>(n);
  if (count == 0) return true;
  noshell_rlimit_t* list = static_cast<noshell_rlimit_t*>(malloc(count * sizeof(noshell_rlimit_t)));
  if (list == nullptr) {
    FreeChildSetup(out);
    return Fail(env, "noshell: out of memory for rlimits");
  }
  for (size_t i = 0; i < count; i++) {
    double resource = a[4 + i * 3];
    list[i].resource = static_cast<int>(resource);
    if (!WholeIn(resource, 0, 63) || !LimitValue(a[5 + i * 3], &list[i].soft) ||
        !LimitValue(a[6 + i * 3], &list[i].hard)) {
      free(list);
      FreeChildSetup(out);
      return Fail(env, "noshell: bad rlimit in setup");
    }
  }
  out->rlimits = list;
  req->rlimits = list;
  req->nrlimits = count;
  return true;
}

}  // namespace noshell
