/* CHECK() for the single-threaded native test drivers: counts passes and
 * failures, prints each failure with its line. main() prints
 * "N passed, M failed" from the two counters. */
#ifndef NOSHELL_TEST_CHECK_H_
#define NOSHELL_TEST_CHECK_H_

#include <stdio.h>

static int passed, failed;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (cond) {                                            \
      passed++;                                            \
    } else {                                               \
      failed++;                                            \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
    }                                                      \
  } while (0)

#endif /* NOSHELL_TEST_CHECK_H_ */
