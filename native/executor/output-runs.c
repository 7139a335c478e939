#include "output-runs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUN 0x7fffffffu

int noshell_runs_add(noshell_runs_t* r, int stream, size_t len) {
  while (len > 0) {
    uint32_t last = r->n > 0 ? r->v[r->n - 1] : 0;
    size_t room = r->n > 0 && (int) (last & 1u) == stream ? MAX_RUN - (last >> 1) : 0;
    if (room > 0) {
      size_t take = len < room ? len : room;
      r->v[r->n - 1] = (uint32_t) ((((last >> 1) + take) << 1) | (uint32_t) stream);
      len -= take;
      continue;
    }
    if (r->n == r->cap) {
      size_t cap = r->cap == 0 ? 16 : r->cap * 2;
      uint32_t* v = realloc(r->v, cap * sizeof(uint32_t));
      if (v == NULL) return ENOMEM;
      r->v = v;
      r->cap = cap;
    }
    r->v[r->n++] = (uint32_t) stream; /* an empty run, filled above */
  }
  return 0;
}

void noshell_runs_free(noshell_runs_t* r) {
  free(r->v);
  r->v = NULL;
  r->n = r->cap = 0;
}

char* noshell_runs_interleave(const noshell_runs_t* r, const char* a, size_t alen, const char* b,
                              size_t blen, size_t* out_len) {
  size_t at[2] = {0, 0};
  const char* src[2] = {a, b};
  size_t len[2] = {alen, blen};
  size_t total = 0;
  char* out = malloc(alen + blen > 0 ? alen + blen : 1);
  if (out == NULL) return NULL;
  for (size_t i = 0; i < r->n; i++) {
    int s = (int) (r->v[i] & 1u);
    size_t n = r->v[i] >> 1;
    if (n > len[s] - at[s]) {
      free(out);
      return NULL;
    }
    if (n > 0) memcpy(out + total, src[s] + at[s], n);
    at[s] += n;
    total += n;
  }
  *out_len = total;
  return out;
}
