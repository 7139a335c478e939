// Strings copied out of JS into malloc'd memory, shared by the spawn glue
// (addon.cc) and the executor glue (executor-addon.cc).
#ifndef NOSHELL_JS_STRINGS_H_
#define NOSHELL_JS_STRINGS_H_

#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>

namespace noshell {

// A string copied out of JS with malloc: a failed allocation (a hostile
// 500 MB argument) is a TypeError, not std::bad_alloc aborting the host
// under -fno-exceptions. No std::vector either: its GCC 12 code needs
// GLIBCXX_3.4.29, newer than the glibc 2.28 baseline's libstdc++ (issue 10).
struct OwnedString {
  char* p = nullptr;
  OwnedString() = default;
  OwnedString(const OwnedString&) = delete;
  OwnedString& operator=(const OwnedString&) = delete;
  ~OwnedString() { free(p); }
  // Hands the string over (free() it); the OwnedString forgets it.
  char* Release() {
    char* s = p;
    p = nullptr;
    return s;
  }

  bool Copy(napi_env env, napi_value v) {
    size_t len = 0;
    if (napi_get_value_string_utf8(env, v, nullptr, 0, &len) != napi_ok)
      return false;
    char* s = static_cast<char*>(malloc(len + 1));
    if (s == nullptr) return false;
    if (napi_get_value_string_utf8(env, v, s, len + 1, &len) != napi_ok) {
      free(s);
      return false;
    }
    free(p);
    p = s;
    return true;
  }
};

// Strings copied out of a JS array, as the NULL-terminated array execve wants.
class StringList {
 public:
  StringList() = default;
  StringList(const StringList&) = delete;
  StringList& operator=(const StringList&) = delete;
  ~StringList() {
    if (ptrs_ == nullptr) return;
    for (uint32_t i = 0; i < n_; i++) free(ptrs_[i]);
    free(ptrs_);
  }

  bool Load(napi_env env, napi_value value) {
    bool is_array = false;
    uint32_t n = 0;
    if (napi_is_array(env, value, &is_array) != napi_ok || !is_array ||
        napi_get_array_length(env, value, &n) != napi_ok)
      return false;
    ptrs_ = static_cast<char**>(calloc(static_cast<size_t>(n) + 1, sizeof(char*)));
    if (ptrs_ == nullptr) return false;
    n_ = n;
    for (uint32_t i = 0; i < n; i++) {
      napi_value item;
      OwnedString s;
      if (napi_get_element(env, value, i, &item) != napi_ok || !s.Copy(env, item))
        return false;
      ptrs_[i] = s.p;
      s.p = nullptr;
    }
    return true;
  }
  char* const* data() const { return ptrs_; }
  // Hands the NULL-terminated list over (free() each string, then the list).
  char** Release() {
    char** p = ptrs_;
    ptrs_ = nullptr;
    n_ = 0;
    return p;
  }

 private:
  char** ptrs_ = nullptr;
  uint32_t n_ = 0;
};

}  // namespace noshell

#endif  // NOSHELL_JS_STRINGS_H_
