/* Numbers as a scrape's lines write them (scrape-number.h). */
#include "scrape-number.h"

#include <math.h>
#include <string.h>

/* Writes u's digits at b, at least `min` of them (zeros first), with a point before the last `point` (none: 0). */
static uint8_t *put_digits(uint8_t *b, uint64_t u, int min, int point) {
  uint8_t digits[24];
  int n = 0;
  do {
    digits[n++] = (uint8_t)('0' + u % 10);
    u /= 10;
  } while (u > 0 || n < min);
  while (n > 0) {
    if (n == point) *b++ = '.';
    *b++ = digits[--n];
  }
  return b;
}

/* Writes decimal v (sign · (X · 16 + d)) at b: X's digits with a point d from the end, "0." first if fewer; NULL if v is not one. */
uint8_t *ns_put_decimal(uint8_t *b, double v) {
  if (!(fabs(v) < 4503599627370496.0)) return NULL; /* 2^52 */
  int64_t t = (int64_t)v;
  if ((double)t != v) return NULL;
  uint64_t a = t < 0 ? (uint64_t)(-t) : (uint64_t)t;
  int d = (int)(a & 15);
  uint64_t x = a >> 4;
  if (d < 1 || d > 15) return NULL;
  if (t < 0) *b++ = '-';
  return put_digits(b, x, d + 1, d);
}

/* Writes v (NaN, ±Inf or a safe integer) at b; gives the end, or NULL for any other number. */
uint8_t *ns_put_number(uint8_t *b, double v) {
  if (isnan(v)) {
    memcpy(b, "NaN", 3);
    return b + 3;
  }
  if (isinf(v)) {
    memcpy(b, v > 0 ? "+Inf" : "-Inf", 4);
    return b + 4;
  }
  if (!(fabs(v) <= 9007199254740991.0)) return NULL;
  int64_t x = (int64_t)v;
  if ((double)x != v) return NULL;
  uint64_t u = x < 0 ? (uint64_t)(-x) : (uint64_t)x;
  if (x < 0) *b++ = '-';
  return put_digits(b, u, 1, 0);
}
