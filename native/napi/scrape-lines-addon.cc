// scrapeLines(): the N-API glue of scrape-lines.c. Every array is checked
// here against the counts it is said to hold; the C core checks each index
// it reads against them.
#include "scrape-lines-addon.h"

#include <stdio.h>
#include <stdlib.h>

#include "../metrics/scrape-lines.h"

namespace noshell {
namespace {

enum { kNext, kStop, kPos, kChecks, kItems, kSlots, kPieces, kStateLength };
enum { kColumns = 8 };

Napi::Value Bad(Napi::Env env, const char* what) {
  // An exception already pending (a getter that threw) is the call's: throwing another would abort the process.
  if (env.IsExceptionPending()) return env.Undefined();
  char m[160];
  snprintf(m, sizeof(m), "scrapeLines: %s", what);
  Napi::TypeError::New(env, m).ThrowAsJavaScriptException();
  return env.Undefined();
}

// Stands in for an empty array's data (which may be null): never read or written.
double empty_data[1];

// The typed array's data if it is of `type` with at least `min` elements, else nullptr (nothing thrown).
void* Data(napi_env env, napi_value v, napi_typedarray_type type, size_t min, size_t* length = nullptr) {
  bool is = false;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return nullptr;
  napi_typedarray_type t;
  size_t len = 0;
  void* data = nullptr;
  if (napi_get_typedarray_info(env, v, &t, &len, &data, nullptr, nullptr) != napi_ok) return nullptr;
  if (t != type || len < min) return nullptr;
  if (length != nullptr) *length = len;
  if (data == nullptr) return min == 0 ? empty_data : nullptr;
  return data;
}

bool Count(double v, double max, uint32_t* out) {
  if (!(v >= 0 && v <= max) || v != static_cast<double>(static_cast<uint32_t>(v))) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

// The elements of array `a` (length n) into out; false if a getter threw (pending) or the array is not one.
bool Elements(napi_env env, napi_value a, uint32_t n, napi_value* out) {
  for (uint32_t i = 0; i < n; i++)
    if (napi_get_element(env, a, i, &out[i]) != napi_ok) return false;
  return true;
}

uint32_t Length(napi_env env, napi_value a) {
  bool is = false;
  uint32_t n = 0;
  if (napi_is_array(env, a, &is) != napi_ok || !is || napi_get_array_length(env, a, &n) != napi_ok) return UINT32_MAX;
  return n;
}

}  // namespace

Napi::Value ScrapeLines(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 7 || !info[0].IsNumber())
    return Bad(env, "(family, name, columns, segments, ends, state, out) expected");
  uint32_t ncols = Length(env, info[2]), nsegs = Length(env, info[3]), nends = Length(env, info[4]);
  if (ncols != kColumns) return Bad(env, "columns must be an array of 8");
  if (nsegs == UINT32_MAX || nends == UINT32_MAX) return Bad(env, "segments and ends must be arrays");
  // Every value read first: an element's getter runs JavaScript, which could
  // detach or shrink a buffer whose data this already held. No JavaScript
  // runs after this block.
  napi_value colv[kColumns];
  // The handles, then the data pointers read from them (at least one element each).
  size_t count = static_cast<size_t>(nsegs) + nends + 1;
  napi_value* vals = static_cast<napi_value*>(malloc(count * sizeof(napi_value)));
  const void** ptrs = static_cast<const void**>(malloc(count * sizeof(void*)));
  if (vals == nullptr || ptrs == nullptr) {
    free(vals);
    free(ptrs);
    if (!env.IsExceptionPending()) Napi::Error::New(env, "scrapeLines: out of memory").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  napi_value* segv = vals;
  napi_value* endv = vals + nsegs;
  if (!Elements(env, info[2], kColumns, colv) || !Elements(env, info[3], nsegs, segv) ||
      !Elements(env, info[4], nends, endv)) {
    free(vals);
    free(ptrs);
    return Bad(env, "an array's element could not be read");
  }

  const char* bad = nullptr;
  ns_columns_t c;
  uint32_t next = 0, stop = 0, pieces = 0;
  size_t name_len = 0, out_len = 0;
  double* st = static_cast<double*>(Data(env, info[5], napi_float64_array, kStateLength));
  const uint8_t* name = static_cast<const uint8_t*>(Data(env, info[1], napi_uint8_array, 0, &name_len));
  uint8_t* out = static_cast<uint8_t*>(Data(env, info[6], napi_uint8_array, 0, &out_len));
  if (st == nullptr) bad = "state must be a Float64Array of 7";
  else if (name == nullptr || out == nullptr) bad = "name and out must be Uint8Arrays";
  else if (!Count(st[kChecks], 4294967294.0, &c.n) || !Count(st[kItems], 4294967295.0, &c.nitems) ||
           !Count(st[kSlots], 4294967295.0, &c.nslots) || !Count(st[kNext], c.n, &next) ||
           !Count(st[kStop], c.n, &stop) || !Count(st[kPieces], 4294967295.0, &pieces))
    bad = "a count in state is out of range";
  else if (!(st[kPos] >= 0 && st[kPos] <= static_cast<double>(out_len)) ||
           st[kPos] != static_cast<double>(static_cast<size_t>(st[kPos])))
    bad = "pos is out of range";
  else if (static_cast<double>(pieces) > static_cast<double>(nends) * NS_ENDS)
    bad = "more pieces than ends";
  if (bad == nullptr) {
    c.row = static_cast<const double*>(Data(env, colv[0], napi_float64_array, static_cast<size_t>(c.n) * NS_ROW));
    c.bits = static_cast<const uint32_t*>(Data(env, colv[1], napi_uint32_array, c.n));
    c.at = static_cast<const uint32_t*>(Data(env, colv[2], napi_uint32_array, c.n));
    c.item0 = static_cast<const uint32_t*>(Data(env, colv[3], napi_uint32_array, static_cast<size_t>(c.n) + 1));
    c.slot0 = static_cast<const uint32_t*>(Data(env, colv[4], napi_uint32_array, c.n));
    c.ibits = static_cast<const uint32_t*>(Data(env, colv[5], napi_uint32_array, c.nitems));
    c.ipiece = static_cast<const uint32_t*>(Data(env, colv[6], napi_uint32_array, c.nitems));
    c.slots = static_cast<const double*>(Data(env, colv[7], napi_float64_array, c.nslots));
    if (c.row == nullptr || c.bits == nullptr || c.at == nullptr || c.item0 == nullptr || c.slot0 == nullptr ||
        c.ibits == nullptr || c.ipiece == nullptr || c.slots == nullptr)
      bad = "a column is not of its type or shorter than its count";
  }
  for (uint32_t i = 0; bad == nullptr && i < nsegs; i++) {
    ptrs[i] = Data(env, segv[i], napi_uint8_array, NS_SEG);
    if (ptrs[i] == nullptr) bad = "a segment is not a Uint8Array of 256 KiB";
  }
  for (uint32_t i = 0; bad == nullptr && i < nends; i++) {
    ptrs[nsegs + i] = Data(env, endv[i], napi_uint32_array, NS_ENDS);
    if (ptrs[nsegs + i] == nullptr) bad = "an ends chunk is not a Uint32Array of 65,536";
  }
  free(vals);
  if (bad != nullptr) {
    free(ptrs);
    return Bad(env, bad);
  }
  ns_pieces_t p = { reinterpret_cast<const uint8_t* const*>(ptrs), nsegs,
                    reinterpret_cast<const uint32_t* const*>(ptrs + nsegs), nends, pieces };
  ns_out_t o = { out, static_cast<size_t>(st[kPos]), out_len };
  int64_t r = ns_scrape_lines(info[0].As<Napi::Number>().Int32Value(), name, name_len, &c, &p, &next, stop, &o);
  free(ptrs);
  if (r == NS_LINES_BAD) return Bad(env, "the columns or pieces do not hold together");
  st[kNext] = next;
  st[kPos] = static_cast<double>(o.pos);
  return Napi::Number::New(env, static_cast<double>(r));
}

}  // namespace noshell
