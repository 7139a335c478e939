/* The child's first step (clone and fork paths, child.c): every signal
 * disposition that is not SIG_DFL back to SIG_DFL, before any signal is
 * unblocked. A handler of the parent's running in a CLONE_VM child would run
 * on shared memory, and an ignored signal stays ignored through execve (Node
 * ignores SIGPIPE; whoever started Node may have left glibc's 32 and 33
 * ignored, which glibc's sigaction() refuses to change).
 *
 * Which ones are not SIG_DFL is read from the child's own /proc/self/status
 * (SigIgn and SigCgt): its table is the parent's as of the clone and nothing
 * else changes it, so the answer is exact, with no race against a thread of
 * the parent installing a handler meanwhile. Five system calls (getgroups,
 * openat, fstatfs, read, close) instead of 62 rt_sigaction calls the parent
 * waits for: measured in a loop, 8.6-13.6 us against 65-75 us on a VM, where
 * each call costs ~1.2 us. Without procfs at /proc, with more than 256
 * supplementary groups, or if its text is not what this expects, every
 * signal is reset, as before.
 * Raw system calls only (child.c says why). */
#define _GNU_SOURCE
#include "spawn-internal.h"

#include <linux/magic.h>
#include <signal.h>
#include <sys/vfs.h>

/* One field's prefix, then the scan state. */
static const char kSigIgn[] = "SigIgn:";
static const char kSigCgt[] = "SigCgt:";
#define PREFIX_LEN 7
/* More supplementary groups than this: /proc/self/status costs more than
 * the 62 calls (about 0.065 us per group on top of ~18 us). */
#define MAX_GROUPS 256

/* No libc call here or below: this runs in the child (a preloaded or
 * sanitizer's memset/memcmp would run on the parent's memory). */
NO_SANITIZE void noshell_sigscan_init(noshell_sigscan_t* s) {
  int i;
  s->mask = 0;
  s->value = 0;
  s->field = 0;
  s->found = 0;
  s->digits = 0;
  s->col = 0;
  for (i = 0; i < (int) sizeof(s->prefix); i++) s->prefix[i] = 0;
}

NO_SANITIZE static int prefix_is(const char* prefix, const char* name) {
  int i;
  for (i = 0; i < PREFIX_LEN; i++)
    if (prefix[i] != name[i]) return 0;
  return 1;
}

/* Feeds n bytes of the status text. Returns 1 once both fields are read
 * (the rest need not be read), -1 when the text is not as expected (a field
 * twice, a value that is not 1 to 16 hex digits), 0 for more. Linear in n,
 * any split of the text gives the same answer. */
NO_SANITIZE int noshell_sigscan_feed(noshell_sigscan_t* s, const char* buf, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    char c = buf[i];
    if (s->field != 0) {
      /* In a value: blanks after the colon, then hex digits to the newline. */
      int d;
      if (c == '\n') {
        if (s->digits == 0) return -1;
        s->mask |= s->value;
        s->found |= s->field;
        s->field = 0;
        s->col = 0;
        if (s->found == 3) return 1;
        continue;
      }
      if ((c == '\t' || c == ' ') && s->digits == 0) continue;
      if (c >= '0' && c <= '9') d = c - '0';
      else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      else return -1;
      if (++s->digits > 16) return -1;
      s->value = (s->value << 4) | (unsigned long long) d;
      continue;
    }
    if (c == '\n') {
      s->col = 0;
      continue;
    }
    if (s->col < PREFIX_LEN) {
      s->prefix[s->col] = c;
      if (++s->col == PREFIX_LEN) {
        int f = prefix_is(s->prefix, kSigIgn) ? 1 : prefix_is(s->prefix, kSigCgt) ? 2 : 0;
        if (f != 0) {
          if (s->found & f) return -1;
          s->field = f;
          s->value = 0;
          s->digits = 0;
        }
      }
    }
    /* Past the prefix of another line: skipped to its newline. */
  }
  return 0;
}

/* The signals this child has a handler for or ignores, bit sig-1 for each;
 * -1 when /proc/self/status cannot tell. */
NO_SANITIZE static int nondefault_signals(unsigned long long* mask) {
  char buf[2048];
  noshell_sigscan_t s;
  struct statfs fs;
  int r = 0;
  int reads = 0;
  long fd;
  /* The fields come after Groups, one number per supplementary group, and
   * the kernel writes the whole text out on the first read: 18 us with no
   * group, 83 us with 1,000, 6 ms with 65,536 (an outside review measured
   * it), against ~100 us for the 62 calls. */
  long ngroups = syscall(SYS_getgroups, 0, NULL);
  if (ngroups < 0 || ngroups > MAX_GROUPS) return -1;
  fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  /* Only procfs's own text: a file mounted over it (or an emulated /proc
   * that prints fixed masks) would leave a handler or an ignore in place. */
  if (syscall(SYS_fstatfs, fd, &fs) != 0 || fs.f_type != PROC_SUPER_MAGIC) {
    syscall(SYS_close, fd);
    return -1;
  }
  noshell_sigscan_init(&s);
  /* And never more than 8 reads (16 KiB). */
  while (r == 0 && reads++ < 8) {
    /* Every signal is blocked here: no EINTR. */
    long n = syscall(SYS_read, fd, buf, sizeof(buf));
    if (n <= 0) {
      r = -1; /* an error, or the end without both fields */
      break;
    }
    r = noshell_sigscan_feed(&s, buf, (size_t) n);
  }
  syscall(SYS_close, fd);
  if (r != 1) return -1;
  *mask = s.mask;
  return 0;
}

NO_SANITIZE void noshell_child_reset_signals(void) {
  /* The kernel's struct sigaction for SIG_DFL, no flags, empty mask: all
   * zeros whatever its layout on this architecture (it is at most 32
   * bytes; this is more). */
  static const unsigned long dfl[8];
  unsigned long long mask = 0;
  int sig;
  if (!(noshell_forced & NOSHELL_FALLBACK_PROC_SIGNALS) && nondefault_signals(&mask) == 0) {
    for (sig = 1; sig <= 64; sig++) {
      if (sig == SIGKILL || sig == SIGSTOP || !((mask >> (sig - 1)) & 1)) continue;
      syscall(SYS_rt_sigaction, sig, dfl, NULL, NSIG / 8);
    }
    return;
  }
  /* Every signal there is (past 64 where an architecture has more). */
  for (sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    syscall(SYS_rt_sigaction, sig, dfl, NULL, NSIG / 8);
  }
}
