/* The child's reading of /proc/self/status (native/core/child-signals.c): the
 * SigIgn and SigCgt fields found in text fed in pieces of every size, bad
 * text refused, and this process's own status giving exactly the signals
 * sigaction() says are handled or ignored. Prints "N passed, M failed". */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../native/core/spawn-internal.h"

#include "check.h"

static const char kStatus[] =
    "Name:\tnode\nUmask:\t0022\nState:\tS (sleeping)\nGroups:\t0 1 2 \nSigQ:\t0/95584\n"
    "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n"
    "SigIgn:\t0000000000001000\nSigCgt:\t0000000180004A02\nCapInh:\t0000000000000000\n";

/* Feeds text in pieces of `piece` bytes (the last one shorter), stopping at
 * the first answer that is not "more". */
static int feed_pieces(const char* text, size_t len, size_t piece, unsigned long long* mask) {
  noshell_sigscan_t s;
  int r = 0;
  size_t off;
  noshell_sigscan_init(&s);
  for (off = 0; off < len && r == 0; off += piece)
    r = noshell_sigscan_feed(&s, text + off, len - off < piece ? len - off : piece);
  *mask = s.mask;
  return r;
}

/* Two pieces split at `at`. */
static int feed_split(const char* text, size_t len, size_t at, unsigned long long* mask) {
  noshell_sigscan_t s;
  int r;
  noshell_sigscan_init(&s);
  r = noshell_sigscan_feed(&s, text, at);
  if (r == 0) r = noshell_sigscan_feed(&s, text + at, len - at);
  *mask = s.mask;
  return r;
}

static int feed_all(const char* text, unsigned long long* mask) {
  return feed_pieces(text, strlen(text), strlen(text) + 1, mask);
}

static void test_splits(void) {
  size_t len = strlen(kStatus), i;
  unsigned long long mask;
  int bad = 0;
  for (i = 0; i <= len; i++)
    if (feed_split(kStatus, len, i, &mask) != 1 || mask != 0x180005A02ULL) bad++;
  CHECK(bad == 0, "%d of %zu splits gave another answer", bad, len + 1);
  for (i = 1; i <= 64; i++)
    if (feed_pieces(kStatus, len, i, &mask) != 1 || mask != 0x180005A02ULL) bad++;
  CHECK(bad == 0, "%d piece sizes gave another answer", bad);
}

static void test_bad_text(void) {
  unsigned long long mask;
  CHECK(feed_all("SigIgn:\t0\n", &mask) == 0, "one field: more wanted");
  CHECK(feed_all("SigCgt:\t1\nName:\tx\n", &mask) == 0, "no SigIgn: more wanted");
  CHECK(feed_all("XSigIgn:\t1\nSigCgt:\t2\n", &mask) == 0, "a field's name inside a line is not the field");
  CHECK(feed_all("Name:\tSigIgn:\t1\nSigCgt:\t2\n", &mask) == 0, "nor inside a value");
  CHECK(feed_all("SigIgn:\t\nSigCgt:\t2\n", &mask) == -1, "empty value");
  CHECK(feed_all("SigIgn:\t00000000000000001\nSigCgt:\t2\n", &mask) == -1, "17 digits");
  CHECK(feed_all("SigIgn:\t0000000000000001\nSigCgt:\tffffffffffffffff\n", &mask) == 1 &&
            mask == ~0ULL, "16 digits each");
  CHECK(feed_all("SigIgn:\t00g0\nSigCgt:\t2\n", &mask) == -1, "not hex");
  CHECK(feed_all("SigIgn:\t1 2\nSigCgt:\t2\n", &mask) == -1, "two words");
  CHECK(feed_all("SigIgn:\t1\nSigIgn:\t2\nSigCgt:\t4\n", &mask) == -1, "a field twice");
  CHECK(feed_all("SigIgn: \t 10\nSigCgt:\t4\n", &mask) == 1 && mask == 0x14, "blanks before the value");
  CHECK(feed_all("", &mask) == 0, "nothing");
}

/* A line of 16 MiB before the fields (a Groups line can be long): read
 * through, one pass. */
static void test_long_line(void) {
  size_t big = 16u << 20;
  const char tail[] = "\nSigIgn:\t1\nSigCgt:\t2\n";
  char* text = malloc(big + sizeof(tail));
  unsigned long long mask = 0;
  if (text == NULL) {
    CHECK(0, "out of memory");
    return;
  }
  memcpy(text, "Groups:\t", 8);
  memset(text + 8, '7', big - 8);
  memcpy(text + big, tail, sizeof(tail));
  CHECK(feed_pieces(text, strlen(text), 2048, &mask) == 1 && mask == 3, "after a 16 MiB line: %llx", mask);
  free(text);
}

static void on_usr1(int sig) {
  (void) sig;
}

/* This process: the mask from its status is what sigaction() reports. */
static void test_own_status(void) {
  char buf[1 << 16];
  FILE* f;
  size_t n;
  unsigned long long mask = 0, want = 0;
  int sig;
  signal(SIGUSR1, on_usr1);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGRTMIN + 3, SIG_IGN);
  f = fopen("/proc/self/status", "r");
  if (f == NULL) {
    printf("skipped: no /proc/self/status\n");
    return;
  }
  n = fread(buf, 1, sizeof(buf), f);
  fclose(f);
  for (sig = 1; sig <= 64; sig++) {
    struct sigaction sa;
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL) want |= 1ULL << (sig - 1);
  }
  CHECK(feed_pieces(buf, n, 7, &mask) == 1, "own status read");
  /* glibc's 32 and 33 are not what sigaction() reports: compare the rest. */
  mask &= ~(3ULL << 31);
  want &= ~(3ULL << 31);
  CHECK(mask == want, "own status %llx, sigaction %llx", mask, want);
  CHECK((mask >> (SIGUSR1 - 1)) & (mask >> (SIGPIPE - 1)) & (mask >> (SIGRTMIN + 2)) & 1, "the three set here: %llx", mask);
  signal(SIGUSR1, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGRTMIN + 3, SIG_DFL);
}

int main(void) {
  test_splits();
  test_bad_text();
  test_long_line();
  test_own_status();
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
