/* One family's sample lines of a run of checks (scrape-lines.h). A line is
 * written once: room for it is looked at as it goes, and a check whose lines
 * do not all fit is taken back and counted (rare: once a chunk). */
#include "scrape-lines.h"

#include <math.h>
#include <string.h>

#include "scrape-number.h"

enum { NUMBER, TEXT, DECIMAL };

#define SUFFIX(s) { (const uint8_t *)(s), sizeof(s) - 1 }
typedef struct {
  const uint8_t *b;
  size_t len;
} bytes_t;

static const bytes_t NONE = { NULL, 0 };
/* [inside][high] */
static const bytes_t BOUND[2][2] = {
  { SUFFIX(",alert=\"outside\",bound=\"low\""), SUFFIX(",alert=\"outside\",bound=\"high\"") },
  { SUFFIX(",alert=\"inside\",bound=\"low\""), SUFFIX(",alert=\"inside\",bound=\"high\"") },
};
static const bytes_t REASON[3] = {
  SUFFIX(",reason=\"limit\""), SUFFIX(",reason=\"duplicate\""), SUFFIX(",reason=\"too_long\""),
};

typedef struct {
  size_t start;
  size_t end;
} span_t;

typedef struct {
  const ns_pieces_t *p;
  const uint8_t *name;
  size_t name_len;
  /* The check's `{check="<id>"`. */
  span_t check;
  uint8_t *buf;
  /* Count the bytes only, write nothing. */
  int count;
  size_t pos;
  size_t cap;
  /* A line did not fit (writing), or the columns do not hold together. */
  int full;
  int bad;
} emit_t;

static int piece(const ns_pieces_t *p, double k, span_t *s) {
  if (!(k >= 0 && k < (double)p->count)) return -1;
  uint32_t i = (uint32_t)k;
  if ((double)i != k) return -1;
  if ((i >> NS_ENDS_BITS) >= p->nends || (i > 0 && ((i - 1) >> NS_ENDS_BITS) >= p->nends)) return -1;
  size_t end = p->ends[i >> NS_ENDS_BITS][i & (NS_ENDS - 1)];
  size_t start = i == 0 ? 0 : p->ends[(i - 1) >> NS_ENDS_BITS][(i - 1) & (NS_ENDS - 1)];
  if (start > end || end > p->nsegs * NS_SEG) return -1;
  s->start = start;
  s->end = end;
  return 0;
}

static uint8_t *copy_span(const ns_pieces_t *p, span_t s, uint8_t *to) {
  size_t at = s.start;
  while (at < s.end) {
    size_t off = at & (NS_SEG - 1);
    size_t n = NS_SEG - off;
    if (n > s.end - at) n = s.end - at;
    memcpy(to, p->segs[at >> NS_SEG_BITS] + off, n);
    to += n;
    at += n;
  }
  return to;
}

/* name + the check's piece + piece `item` (unless NULL) + suffix + "} " + value + "\n". */
static void line(emit_t *e, const span_t *item, bytes_t suffix, double v, int how) {
  if (e->full || e->bad) return;
  span_t t = { 0, 0 };
  int text = how == TEXT;
  if (text && piece(e->p, v, &t) != 0) {
    e->bad = 1;
    return;
  }
  size_t n = e->name_len + (e->check.end - e->check.start) + (item == NULL ? 0 : item->end - item->start) + suffix.len + 3 +
             (text ? t.end - t.start : NS_NUMBER_MAX);
  if (e->count) {
    uint8_t scratch[NS_NUMBER_MAX];
    if (!text && (how == DECIMAL ? ns_put_decimal(scratch, v) : ns_put_number(scratch, v)) == NULL) e->bad = 1;
    e->pos += n;
    return;
  }
  if (n > e->cap - e->pos) {
    e->full = 1;
    return;
  }
  uint8_t *b = e->buf + e->pos;
  memcpy(b, e->name, e->name_len);
  b = copy_span(e->p, e->check, b + e->name_len);
  if (item != NULL) b = copy_span(e->p, *item, b);
  if (suffix.len > 0) {
    memcpy(b, suffix.b, suffix.len);
    b += suffix.len;
  }
  *b++ = '}';
  *b++ = ' ';
  if (text) {
    b = copy_span(e->p, t, b);
  } else {
    b = how == DECIMAL ? ns_put_decimal(b, v) : ns_put_number(b, v);
    if (b == NULL) {
      e->bad = 1;
      return;
    }
  }
  *b++ = '\n';
  e->pos = (size_t)(b - e->buf);
}

/* The kind of logical slot k of bits whose decimal bits start at `decimal`. */
static int kind(unsigned bits, int k, int decimal) {
  return (bits >> k) & 1 ? TEXT : (bits >> (decimal + k)) & 1 ? DECIMAL : NUMBER;
}

static void threshold(emit_t *e, const span_t *item, const double *s, unsigned ib, int slot, int inside) {
  for (int high = 0; high < 2; high++) {
    int k = kind(ib, slot + high, NS_I_DECIMAL);
    if (k != NUMBER || isfinite(s[high])) line(e, item, BOUND[inside][high], s[high], k);
  }
}

static void items(emit_t *e, int family, const ns_columns_t *c, uint32_t i) {
  uint32_t first = c->item0[i], last = c->item0[i + 1];
  if (first > last || last > c->nitems) {
    e->bad = 1;
    return;
  }
  size_t s = c->slot0[i];
  for (uint32_t j = first; j < last && !e->full && !e->bad; j++) {
    unsigned ib = c->ibits[j];
    int warn = (ib & NS_I_WARN) != 0, crit = (ib & NS_I_CRIT) != 0, min = (ib & NS_I_MIN) != 0, max = (ib & NS_I_MAX) != 0;
    size_t n = 1 + 2 * (size_t)warn + 2 * (size_t)crit + (size_t)min + (size_t)max;
    span_t item;
    if (s + n > c->nslots || piece(e->p, c->ipiece[j], &item) != 0) {
      e->bad = 1;
      return;
    }
    const double *v = c->slots + s;
    size_t at_crit = 1 + 2 * (size_t)warn, at_min = at_crit + 2 * (size_t)crit, at_max = at_min + (size_t)min;
    switch (family) {
      case NS_F_PERFDATA:
        line(e, &item, NONE, v[0], kind(ib, NS_S_VALUE, NS_I_DECIMAL));
        break;
      case NS_F_WARN:
        if (warn) threshold(e, &item, v + 1, ib, NS_S_WARN_LOW, (ib & NS_I_WARN_INSIDE) != 0);
        break;
      case NS_F_CRIT:
        if (crit) threshold(e, &item, v + at_crit, ib, NS_S_CRIT_LOW, (ib & NS_I_CRIT_INSIDE) != 0);
        break;
      case NS_F_MIN:
        if (min) line(e, &item, NONE, v[at_min], kind(ib, NS_S_MIN, NS_I_DECIMAL));
        break;
      case NS_F_MAX:
        if (max) line(e, &item, NONE, v[at_max], kind(ib, NS_S_MAX, NS_I_DECIMAL));
        break;
    }
    s += n;
  }
}

/* Check i's lines of the family, written or counted as e says. */
static void check_lines(emit_t *e, int family, const ns_columns_t *c, uint32_t i) {
  if (piece(e->p, c->at[i], &e->check) != 0) {
    e->bad = 1;
    return;
  }
  uint32_t bits = c->bits[i];
  const double *row = c->row + (size_t)i * NS_ROW;
  switch (family) {
    case NS_F_INTERVAL:
    case NS_F_RUNNING:
      line(e, NULL, NONE, row[family], kind(bits, family, NS_C_DECIMAL));
      return;
    case NS_F_STATE:
    case NS_F_STATE_TYPE:
    case NS_F_ATTEMPT:
    case NS_F_MAX_ATTEMPTS:
    case NS_F_LAST_RUN:
    case NS_F_LAST_CHANGE:
    case NS_F_EXECUTION:
    case NS_F_LATENCY:
      if (bits & NS_C_HAS_LAST) line(e, NULL, NONE, row[family], kind(bits, family, NS_C_DECIMAL));
      return;
    case NS_F_LABEL_SETS:
      if (bits & NS_C_HAS_PERF) line(e, NULL, NONE, row[NS_R_LABEL_SETS], kind(bits, NS_R_LABEL_SETS, NS_C_DECIMAL));
      return;
    case NS_F_DROPPED:
      if (!(bits & NS_C_HAS_PERF)) return;
      for (int k = 0; k < 3; k++) line(e, NULL, REASON[k], row[NS_R_DROP_LIMIT + k], kind(bits, NS_R_DROP_LIMIT + k, NS_C_DECIMAL));
      return;
    default:
      if (bits & NS_C_HAS_PERF) items(e, family, c, i);
      return;
  }
}

int64_t ns_scrape_lines(int family, const uint8_t *name, size_t name_len, const ns_columns_t *c,
                        const ns_pieces_t *p, uint32_t *next, uint32_t stop, ns_out_t *out) {
  if (family < 0 || family >= NS_F_COUNT || stop > c->n || out->pos > out->cap) return NS_LINES_BAD;
  if (out->buf == NULL) return NS_LINES_BAD;
  emit_t e = { p, name, name_len, { 0, 0 }, out->buf, 0, out->pos, out->cap, 0, 0 };
  for (uint32_t i = *next; i < stop; i++) {
    size_t at = e.pos;
    check_lines(&e, family, c, i);
    if (e.bad) return NS_LINES_BAD;
    if (e.full) {
      // Taken back and counted: the caller makes that much room.
      emit_t count = { p, name, name_len, { 0, 0 }, NULL, 1, 0, 0, 0, 0 };
      check_lines(&count, family, c, i);
      if (count.bad) return NS_LINES_BAD;
      out->pos = at;
      *next = i;
      return count.pos > (size_t)INT64_MAX ? NS_LINES_BAD : (int64_t)(count.pos == 0 ? 1 : count.pos);
    }
    out->pos = e.pos;
    *next = i + 1;
  }
  return NS_LINES_DONE;
}
