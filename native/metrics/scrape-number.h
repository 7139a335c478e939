/* The numbers the scrape's line writer formats itself (scrape-lines.h):
 * NaN, ±Inf and safe integers as the Prometheus text format and JavaScript's
 * String() write them, and decimals (sign · (X · 16 + d): X's digits with a
 * point d from the end), which src/metrics/scrape/decimal.ts gives only where that
 * is String()'s text. Any other number comes as text from JavaScript. */
#ifndef NOSHELL_SCRAPE_NUMBER_H
#define NOSHELL_SCRAPE_NUMBER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes either writes at most: "-9007199254740991" is 17, a decimal 18 ("-0." and 15 digits). */
#define NS_NUMBER_MAX 24

/* Writes v (NaN, ±Inf or a safe integer) at b; gives the end, or NULL for any other number. */
uint8_t *ns_put_number(uint8_t *b, double v);

/* Writes decimal v at b; gives the end, or NULL if v is not one (d not 1 … 15, |v| not a whole number below 2^52). */
uint8_t *ns_put_decimal(uint8_t *b, double v);

#ifdef __cplusplus
}
#endif

#endif
