/* The order in which a child's stdout and stderr arrived, kept as runs of
 * bytes per stream, so the two captured buffers can be interleaved into one
 * (exec's `all`) without a third copy while the child runs. */
#ifndef NOSHELL_OUTPUT_RUNS_H_
#define NOSHELL_OUTPUT_RUNS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  uint32_t* v;   /* (length << 1) | stream (0 stdout, 1 stderr) */
  size_t n;
  size_t cap;
} noshell_runs_t;

/* Records len more bytes of stream; 0, or ENOMEM (nothing recorded). */
int noshell_runs_add(noshell_runs_t* r, int stream, size_t len);
void noshell_runs_free(noshell_runs_t* r);

/* out[0 … out_len) := the bytes of a (stdout) and b (stderr) in the order the
 * runs say; malloc'd (free() it), or NULL when out of memory or when the
 * runs name more bytes than a and b hold. out_len 0 gives a 1-byte buffer. */
char* noshell_runs_interleave(const noshell_runs_t* r, const char* a, size_t alen, const char* b,
                              size_t blen, size_t* out_len);

#ifdef __cplusplus
}
#endif

#endif /* NOSHELL_OUTPUT_RUNS_H_ */
