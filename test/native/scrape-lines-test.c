/* The scrape's line writer (native/metrics/scrape-lines.c) on its own: each
 * family's lines of a known check byte for byte, numbers (integers, NaN,
 * ±Inf, decimals, texts), a check that does not fit taken back and counted,
 * pieces that run over a segment's end, columns that do not hold together
 * refused, and random columns never read or written out of bounds (run
 * under ASan and UBSan). Prints "N passed, M failed". */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../native/metrics/scrape-lines.h"

#include "check.h"

typedef struct {
  uint8_t *segs[8];
  uint32_t *ends[2];
  size_t len;
  uint32_t count;
  ns_pieces_t p;
} pieces_t;

static void pieces_init(pieces_t *t, size_t nsegs) {
  memset(t, 0, sizeof(*t));
  for (size_t i = 0; i < nsegs; i++) t->segs[i] = calloc(1, NS_SEG);
  for (size_t i = 0; i < 2; i++) t->ends[i] = calloc(NS_ENDS, sizeof(uint32_t));
  t->p.segs = (const uint8_t *const *)t->segs;
  t->p.nsegs = nsegs;
  t->p.ends = (const uint32_t *const *)t->ends;
  t->p.nends = 2;
}

static void pieces_free(pieces_t *t) {
  for (size_t i = 0; i < 8; i++) free(t->segs[i]);
  for (size_t i = 0; i < 2; i++) free(t->ends[i]);
}

/* Adds s as the next piece; gives its index. */
static uint32_t add(pieces_t *t, const char *s) {
  for (size_t i = 0; s[i] != '\0'; i++, t->len++) t->segs[t->len >> NS_SEG_BITS][t->len & (NS_SEG - 1)] = (uint8_t)s[i];
  uint32_t k = t->count++;
  t->ends[k >> NS_ENDS_BITS][k & (NS_ENDS - 1)] = (uint32_t)t->len;
  t->p.count = t->count;
  return k;
}

static double decimal(int64_t x, int d) {
  return x < 0 ? -(double)(-x * 16 + d) : (double)(x * 16 + d);
}

/* One check, "c1", with a result and two items: rta (value 0.5 decimal,
 * warn 0:100 outside, crit 0:500 outside, min 0) and pl (value as text
 * "1.5e-7", no thresholds, max 100). */
typedef struct {
  double row[NS_ROW];
  uint32_t bits[1], at[1], item0[2], slot0[1], ibits[2], ipiece[2];
  double slots[8];
  ns_columns_t c;
} fixture_t;

static void fixture(fixture_t *f, pieces_t *t) {
  memset(f, 0, sizeof(*f));
  f->at[0] = add(t, "{check=\"c1\"");
  f->ipiece[0] = add(t, ",label=\"rta\",uom=\"s\"");
  f->ipiece[1] = add(t, ",label=\"pl\",uom=\"%\"");
  uint32_t text = add(t, "1.5e-7");
  uint32_t stamp = add(t, "1796315464.3305366");
  double row[NS_ROW] = { 60, 0, 2, 1, 3, 3, stamp, decimal(1764777777123, 3), decimal(2345678, 9), NAN, 2, 0, 1, 0 };
  memcpy(f->row, row, sizeof(row));
  f->bits[0] = NS_C_HAS_LAST | NS_C_HAS_PERF | (1u << NS_R_LAST_RUN) | (1u << (NS_C_DECIMAL + NS_R_LAST_CHANGE)) |
               (1u << (NS_C_DECIMAL + NS_R_EXECUTION));
  f->item0[0] = 0;
  f->item0[1] = 2;
  f->slot0[0] = 0;
  f->ibits[0] = NS_I_WARN | NS_I_CRIT | NS_I_MIN | (1u << (NS_I_DECIMAL + NS_S_VALUE));
  f->ibits[1] = NS_I_MAX | (1u << NS_S_VALUE);
  double slots[8] = { decimal(5, 1), 0, 100, -INFINITY, 500, 0, text, 100 };
  memcpy(f->slots, slots, sizeof(slots));
  f->c = (ns_columns_t){ 1, f->row, f->bits, f->at, f->item0, f->slot0, f->ibits, f->ipiece, 2, f->slots, 8 };
}

static const char *const kExpect[NS_F_COUNT] = {
  "f{check=\"c1\"} 60\n",
  "f{check=\"c1\"} 0\n",
  "f{check=\"c1\"} 2\n",
  "f{check=\"c1\"} 1\n",
  "f{check=\"c1\"} 3\n",
  "f{check=\"c1\"} 3\n",
  "f{check=\"c1\"} 1796315464.3305366\n",
  "f{check=\"c1\"} 1764777777.123\n",
  "f{check=\"c1\"} 0.002345678\n",
  "f{check=\"c1\"} NaN\n",
  "f{check=\"c1\",label=\"rta\",uom=\"s\"} 0.5\nf{check=\"c1\",label=\"pl\",uom=\"%\"} 1.5e-7\n",
  "f{check=\"c1\",label=\"rta\",uom=\"s\",alert=\"outside\",bound=\"low\"} 0\n"
  "f{check=\"c1\",label=\"rta\",uom=\"s\",alert=\"outside\",bound=\"high\"} 100\n",
  "f{check=\"c1\",label=\"rta\",uom=\"s\",alert=\"outside\",bound=\"high\"} 500\n",
  "f{check=\"c1\",label=\"rta\",uom=\"s\"} 0\n",
  "f{check=\"c1\",label=\"pl\",uom=\"%\"} 100\n",
  "f{check=\"c1\"} 2\n",
  "f{check=\"c1\",reason=\"limit\"} 0\nf{check=\"c1\",reason=\"duplicate\"} 1\nf{check=\"c1\",reason=\"too_long\"} 0\n",
};

static int64_t write(int family, const ns_columns_t *c, const pieces_t *t, uint32_t *next, uint32_t stop, uint8_t *buf,
                     size_t *pos, size_t cap) {
  ns_out_t o = { buf, *pos, cap };
  int64_t r = ns_scrape_lines(family, (const uint8_t *)"f", 1, c, &t->p, next, stop, &o);
  *pos = o.pos;
  return r;
}

static void test_families(void) {
  pieces_t t;
  fixture_t f;
  pieces_init(&t, 1);
  fixture(&f, &t);
  uint8_t buf[4096];
  for (int fam = 0; fam < NS_F_COUNT; fam++) {
    uint32_t next = 0;
    size_t pos = 0;
    int64_t r = write(fam, &f.c, &t, &next, 1, buf, &pos, sizeof(buf));
    CHECK(r == NS_LINES_DONE && next == 1, "family %d: r %lld next %u", fam, (long long)r, next);
    CHECK(pos == strlen(kExpect[fam]) && memcmp(buf, kExpect[fam], pos) == 0, "family %d: got %.*s", fam, (int)pos, buf);
  }
  /* No result, no perfdata: only interval and running. */
  f.bits[0] = 0;
  for (int fam = 0; fam < NS_F_COUNT; fam++) {
    uint32_t next = 0;
    size_t pos = 0;
    int64_t r = write(fam, &f.c, &t, &next, 1, buf, &pos, sizeof(buf));
    CHECK(r == NS_LINES_DONE && (pos > 0) == (fam <= NS_F_RUNNING), "family %d without result: pos %zu", fam, pos);
  }
  pieces_free(&t);
}

/* A check of one row slot (its interval) holding v, a decimal or not: its line written into buf. */
static int64_t write_one(const pieces_t *t, uint32_t at, double v, int decimal, uint8_t *buf, size_t cap, size_t *pos) {
  double row[NS_ROW] = { v };
  uint32_t bits = decimal ? 1u << NS_C_DECIMAL : 0, item0[2] = { 0, 0 }, slot0 = 0, next = 0;
  ns_columns_t c = { 1, row, &bits, &at, item0, &slot0, NULL, NULL, 0, NULL, 0 };
  int64_t r = write(NS_F_INTERVAL, &c, t, &next, 1, buf, pos, cap);
  return r == NS_LINES_DONE && next != 1 ? NS_LINES_BAD - 1 : r;
}

static void test_numbers(void) {
  static const struct {
    double v;
    int decimal;
    const char *text;
  } cases[] = {
    { 0, 0, "0" }, { -0.0, 0, "0" }, { 1023, 0, "1023" }, { -7, 0, "-7" },
    { 9007199254740991.0, 0, "9007199254740991" }, { -9007199254740991.0, 0, "-9007199254740991" },
    { NAN, 0, "NaN" }, { INFINITY, 0, "+Inf" }, { -INFINITY, 0, "-Inf" },
    { 5 * 16 + 1, 1, "0.5" }, { -(5 * 16 + 1), 1, "-0.5" }, { 1 * 16 + 6, 1, "0.000001" },
    { 123456 * 16 + 3, 1, "123.456" }, { 281474976710655.0 * 16 + 15, 1, "0.281474976710655" },
    { 281474976710655.0 * 16 + 1, 1, "28147497671065.5" },
  };
  pieces_t t;
  pieces_init(&t, 1);
  uint32_t at = add(&t, "{");
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    uint8_t buf[64];
    size_t pos = 0;
    char want[64];
    snprintf(want, sizeof(want), "f{} %s\n", cases[k].text);
    int64_t r = write_one(&t, at, cases[k].v, cases[k].decimal, buf, sizeof(buf), &pos);
    CHECK(r == NS_LINES_DONE && pos == strlen(want) && memcmp(buf, want, pos) == 0, "number %zu: %.*s", k, (int)pos, buf);
  }
  /* Neither a safe integer nor a decimal: refused, nothing written. */
  static const struct {
    double v;
    int decimal;
  } bad[] = { { 0.5, 0 }, { 9007199254740992.0, 0 }, { 1e300, 0 }, { 5 * 16, 1 }, { 0.5, 1 }, { 4503599627370496.0, 1 }, { NAN, 1 } };
  for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
    uint8_t buf[64];
    size_t pos = 0;
    int64_t r = write_one(&t, at, bad[k].v, bad[k].decimal, buf, sizeof(buf), &pos);
    CHECK(r == NS_LINES_BAD && pos == 0, "bad number %zu: r %lld", k, (long long)r);
  }
  pieces_free(&t);
}

/* Three checks whose lines do not all fit: each call writes whole checks and gives what the next needs. */
static void test_room(void) {
  pieces_t t;
  pieces_init(&t, 1);
  double row[3 * NS_ROW] = { 1 };
  row[NS_ROW] = 22;
  row[2 * NS_ROW] = 333;
  uint32_t bits[3] = { 0, 0, 0 }, at[3], item0[4] = { 0 }, slot0[3] = { 0 };
  at[0] = add(&t, "{check=\"a\"");
  at[1] = add(&t, "{check=\"bb\"");
  at[2] = add(&t, "{check=\"ccc\"");
  ns_columns_t c = { 3, row, bits, at, item0, slot0, NULL, NULL, 0, NULL, 0 };
  const char *want = "f{check=\"a\"} 1\nf{check=\"bb\"} 22\nf{check=\"ccc\"} 333\n";
  char got[256];
  size_t len = 0;
  uint32_t next = 0;
  int calls = 0;
  for (size_t cap = 20; next < 3 && calls < 10; calls++) {
    uint8_t *buf = malloc(cap);
    size_t pos = 0;
    int64_t r = write(NS_F_INTERVAL, &c, &t, &next, 3, buf, &pos, cap);
    CHECK(r >= 0, "room: r %lld", (long long)r);
    memcpy(got + len, buf, pos);
    len += pos;
    if (r > 0) {
      CHECK((size_t)r > cap - pos && r < 64, "room: need %lld with %zu left", (long long)r, cap - pos);
      cap = (size_t)r;
    }
    free(buf);
  }
  CHECK(next == 3 && len == strlen(want) && memcmp(got, want, len) == 0, "room: %.*s after %d calls", (int)len, got, calls);
  /* A check stopped at: stop before n writes no further. */
  uint8_t buf[256];
  size_t pos = 0;
  next = 1;
  CHECK(write(NS_F_INTERVAL, &c, &t, &next, 2, buf, &pos, sizeof(buf)) == NS_LINES_DONE && next == 2 &&
            pos == strlen("f{check=\"bb\"} 22\n"),
        "stop: next %u pos %zu", next, pos);
  pieces_free(&t);
}

/* A piece that runs from one segment into the next is copied whole. */
static void test_segments(void) {
  pieces_t t;
  pieces_init(&t, 2);
  char *fill = malloc(NS_SEG - 4 + 1);
  memset(fill, 'x', NS_SEG - 4);
  fill[NS_SEG - 4] = '\0';
  add(&t, fill);
  free(fill);
  uint32_t at = add(&t, "{check=\"spans\"");
  double row[NS_ROW] = { 7 };
  uint32_t bits = 0, item0[2] = { 0, 0 }, slot0 = 0;
  ns_columns_t c = { 1, row, &bits, &at, item0, &slot0, NULL, NULL, 0, NULL, 0 };
  uint8_t buf[64];
  uint32_t next = 0;
  size_t pos = 0;
  const char *want = "f{check=\"spans\"} 7\n";
  CHECK(write(NS_F_INTERVAL, &c, &t, &next, 1, buf, &pos, sizeof(buf)) == NS_LINES_DONE && pos == strlen(want) &&
            memcmp(buf, want, pos) == 0,
        "segments: %.*s", (int)pos, buf);
  /* Ends past the segments given: refused. */
  t.p.nsegs = 1;
  next = 0;
  pos = 0;
  CHECK(write(NS_F_INTERVAL, &c, &t, &next, 1, buf, &pos, sizeof(buf)) == NS_LINES_BAD, "segments: end past them");
  pieces_free(&t);
}

static void test_bad_columns(void) {
  pieces_t t;
  fixture_t f;
  pieces_init(&t, 1);
  fixture(&f, &t);
  uint8_t buf[4096];
  uint32_t next = 0;
  size_t pos = 0;
  CHECK(write(NS_F_COUNT, &f.c, &t, &next, 1, buf, &pos, sizeof(buf)) == NS_LINES_BAD, "family past the last");
  CHECK(write(-1, &f.c, &t, &next, 1, buf, &pos, sizeof(buf)) == NS_LINES_BAD, "family -1");
  CHECK(write(NS_F_INTERVAL, &f.c, &t, &next, 2, buf, &pos, sizeof(buf)) == NS_LINES_BAD, "stop past n");
  CHECK(write(NS_F_INTERVAL, &f.c, &t, &next, 1, NULL, &pos, 0) == NS_LINES_BAD, "no buffer");
  CHECK(write(NS_F_INTERVAL, &f.c, &t, &next, 1, buf, &pos, 0) > 0 && pos == 0 && next == 0, "an empty buffer: room asked");
  f.at[0] = t.count;
  CHECK(write(NS_F_INTERVAL, &f.c, &t, &next, 1, buf, &pos, sizeof(buf)) == NS_LINES_BAD, "check piece past count");
  fixture(&f, &t);
  f.ipiece[1] = t.count; /* an item's piece past the pieces made */
  CHECK(write(NS_F_PERFDATA, &f.c, &t, &next, 1, buf, &pos, sizeof(buf)) == NS_LINES_BAD, "item piece past count");
  fixture(&f, &t);
  f.item0[1] = 3;
  CHECK(write(NS_F_PERFDATA, &f.c, &t, &next, 1, buf, &pos, sizeof(buf)) == NS_LINES_BAD, "items past nitems");
  fixture(&f, &t);
  f.item0[0] = 2;
  f.item0[1] = 1;
  CHECK(write(NS_F_PERFDATA, &f.c, &t, &next, 1, buf, &pos, sizeof(buf)) == NS_LINES_BAD, "items backwards");
  fixture(&f, &t);
  f.c.nslots = 7;
  CHECK(write(NS_F_MAX, &f.c, &t, &next, 1, buf, &pos, sizeof(buf)) == NS_LINES_BAD, "slots past nslots");
  fixture(&f, &t);
  f.row[NS_R_LAST_RUN] = 1e9; /* a text slot whose piece does not exist */
  CHECK(write(NS_F_LAST_RUN, &f.c, &t, &next, 1, buf, &pos, sizeof(buf)) == NS_LINES_BAD, "text piece past count");
  f.row[NS_R_LAST_RUN] = 0.5;
  CHECK(write(NS_F_LAST_RUN, &f.c, &t, &next, 1, buf, &pos, sizeof(buf)) == NS_LINES_BAD, "text piece not an index");
  CHECK(next == 0 && pos == 0, "nothing written by a refused call: next %u pos %zu", next, pos);
  pieces_free(&t);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Random columns over random pieces: refused or written within the buffer, never read out of bounds (ASan). */
static void test_random(void) {
  enum { N = 16, ITEMS = 40, SLOTS = 120 };
  pieces_t t;
  pieces_init(&t, 1);
  for (int k = 0; k < 60; k++) add(&t, k % 3 == 0 ? "{check=\"r\"" : k % 3 == 1 ? ",label=\"x\"" : "12.5");
  int done = 0, refused = 0;
  for (int round = 0; round < 20000; round++) {
    double row[N * NS_ROW], slots[SLOTS];
    uint32_t bits[N], at[N], item0[N + 1], slot0[N], ibits[ITEMS], ipiece[ITEMS];
    /* Mostly what a scrape gives (small integers, NaN, ±Inf, piece 5's "12.5" as text, 0.5 as a decimal), now and then not. */
    static const double pick[] = { 0, 1, -3, NAN, INFINITY, -INFINITY, 17, 5, 5 * 16 + 1, 5, 0.5, 1e300 };
    int odd = round % 2 == 0;
    for (int i = 0; i < N * NS_ROW; i++) row[i] = pick[rnd() % (odd ? 12 : 10)];
    for (int i = 0; i < SLOTS; i++) slots[i] = pick[rnd() % (odd ? 12 : 10)];
    for (int i = 0; i < N; i++) {
      bits[i] = ((uint32_t)rnd() & (NS_C_HAS_LAST | NS_C_HAS_PERF)) | (odd ? (uint32_t)(rnd() & rnd() & rnd()) : 0);
      at[i] = (uint32_t)(rnd() % (odd ? 64 : 40));
      slot0[i] = (uint32_t)(rnd() % (SLOTS + 4));
    }
    for (int i = 0; i <= N; i++) item0[i] = (uint32_t)(rnd() % (ITEMS + 2));
    if (!odd) {
      for (int i = 0; i <= N; i++) item0[i] = (uint32_t)(i * 2);
      for (int i = 0; i < N; i++) slot0[i] = (uint32_t)(i * 7);
    }
    for (int i = 0; i < ITEMS; i++) {
      ibits[i] = odd ? (uint32_t)rnd() : (uint32_t)rnd() & 0x3f00;
      ipiece[i] = (uint32_t)(rnd() % (odd ? 64 : 60));
    }
    ns_columns_t c = { N, row, bits, at, item0, slot0, ibits, ipiece, ITEMS, slots, SLOTS };
    size_t cap = 1 + rnd() % 2048;
    uint8_t *buf = malloc(cap);
    uint32_t next = 0;
    size_t pos = 0;
    int64_t r = write((int)(rnd() % NS_F_COUNT), &c, &t, &next, N, buf, &pos, cap);
    if (r == NS_LINES_BAD) refused++;
    else done++;
    if (r < 0 && r != NS_LINES_BAD) CHECK(0, "random: r %lld", (long long)r);
    if (pos > cap || next > N) CHECK(0, "random: pos %zu of %zu, next %u", pos, cap, next);
    free(buf);
  }
  CHECK(done > 1000 && refused > 1000, "random: %d written, %d refused", done, refused);
  pieces_free(&t);
}

int main(void) {
  test_families();
  test_numbers();
  test_room();
  test_segments();
  test_bad_columns();
  test_random();
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
