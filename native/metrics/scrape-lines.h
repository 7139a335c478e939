/* A scrape's per-check sample lines, written from columns of numbers
 * (issue 19). The TypeScript side (src/metrics/scrape/check-view.ts) reads each
 * check's status once per scrape into these columns and the text the lines
 * repeat into pieces (src/metrics/scrape/scrape-text.ts); this writes one family's
 * lines for a run of checks into a buffer. Plain C with no Node in it, so
 * test/native/scrape-lines-test.c runs it under ASan and UBSan. Nothing here
 * trusts the columns: every index is checked against what was passed. */
#ifndef NOSHELL_SCRAPE_LINES_H
#define NOSHELL_SCRAPE_LINES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A check's row: NS_ROW doubles. */
enum {
  NS_R_INTERVAL, NS_R_RUNNING, NS_R_STATE, NS_R_STATE_TYPE, NS_R_ATTEMPT, NS_R_MAX_ATTEMPTS,
  NS_R_LAST_RUN, NS_R_LAST_CHANGE, NS_R_EXECUTION, NS_R_LATENCY,
  NS_R_LABEL_SETS, NS_R_DROP_LIMIT, NS_R_DROP_DUPLICATE, NS_R_DROP_TOO_LONG,
  NS_ROW
};

/* A slot holds a safe integer, NaN or ±Inf as it is; or, its text bit set,
 * the index of a piece with its number's text; or, its decimal bit set, a
 * number with d = 1 … 15 digits after the point and no exponent, as
 * sign · (X · 16 + d) for the integer X = the number · 10^d, |X| < 2^48.
 * A check's bits: bit s (s < NS_ROW) is row slot s's text bit, bit
 * NS_C_DECIMAL + s its decimal bit. */
#define NS_C_HAS_LAST (1u << 16)
#define NS_C_HAS_PERF (1u << 17)
#define NS_C_DECIMAL 18

/* An item's slots, in this order, only those it has: value (always), warn
 * low and high, crit low and high, min, max. Its bits: bit k (k < 7) is the
 * text bit of logical slot k (the order above, present or not), bit
 * NS_I_DECIMAL + k its decimal bit. */
enum { NS_S_VALUE, NS_S_WARN_LOW, NS_S_WARN_HIGH, NS_S_CRIT_LOW, NS_S_CRIT_HIGH, NS_S_MIN, NS_S_MAX, NS_SLOTS };
#define NS_I_WARN (1u << 8)
#define NS_I_CRIT (1u << 9)
#define NS_I_MIN (1u << 10)
#define NS_I_MAX (1u << 11)
#define NS_I_WARN_INSIDE (1u << 12)
#define NS_I_CRIT_INSIDE (1u << 13)
#define NS_I_DECIMAL 16

/* The per-check families, in the order of src/metrics/model/families.ts. */
enum ns_family {
  NS_F_INTERVAL, NS_F_RUNNING, NS_F_STATE, NS_F_STATE_TYPE, NS_F_ATTEMPT, NS_F_MAX_ATTEMPTS,
  NS_F_LAST_RUN, NS_F_LAST_CHANGE, NS_F_EXECUTION, NS_F_LATENCY,
  NS_F_PERFDATA, NS_F_WARN, NS_F_CRIT, NS_F_MIN, NS_F_MAX, NS_F_LABEL_SETS, NS_F_DROPPED,
  NS_F_COUNT
};

/* Pieces: one run of bytes in segments of NS_SEG bytes; where piece k ends
 * is ends[k >> 16][k & 0xffff], and it starts where piece k - 1 ends. */
#define NS_SEG_BITS 18
#define NS_SEG ((size_t)1 << NS_SEG_BITS)
#define NS_ENDS_BITS 16
#define NS_ENDS ((size_t)1 << NS_ENDS_BITS)

typedef struct {
  const uint8_t *const *segs;
  size_t nsegs;
  const uint32_t *const *ends;
  size_t nends;
  /* Pieces made: ends of pieces past it are not read. */
  uint32_t count;
} ns_pieces_t;

typedef struct {
  uint32_t n;
  const double *row;      /* n * NS_ROW */
  const uint32_t *bits;   /* n */
  const uint32_t *at;     /* n: the piece `{check="<id>"` */
  const uint32_t *item0;  /* n + 1: the check's first item; the last is the number of items */
  const uint32_t *slot0;  /* n: the check's first item slot */
  const uint32_t *ibits;  /* nitems */
  const uint32_t *ipiece; /* nitems: the item's piece `,label="…",uom="…"` */
  uint32_t nitems;
  const double *slots;    /* nslots */
  uint32_t nslots;
} ns_columns_t;

typedef struct {
  uint8_t *buf; /* never NULL (an empty buffer: any pointer, cap 0) */
  size_t pos;
  size_t cap;
} ns_out_t;

/* What ns_scrape_lines gives besides a byte count. */
#define NS_LINES_DONE 0
#define NS_LINES_BAD (-1)

/*
 * Writes family `family`'s lines (each `name` + labels + `} ` + value +
 * `\n`) of checks *next … stop - 1 into out, a check's lines all or none,
 * and moves *next and out->pos on. Gives NS_LINES_DONE when *next reached
 * stop; the bytes check *next may take when they do not fit in what is
 * left of out (make room and call again); NS_LINES_BAD when the columns or
 * pieces do not hold together (an index out of range, a value that is
 * neither a piece, a decimal as above, a safe integer, NaN nor ±Inf): nothing past *next is
 * written then.
 */
int64_t ns_scrape_lines(int family, const uint8_t *name, size_t name_len, const ns_columns_t *c,
                        const ns_pieces_t *p, uint32_t *next, uint32_t stop, ns_out_t *out);

#ifdef __cplusplus
}
#endif

#endif
