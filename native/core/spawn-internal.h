/* Shared between spawn.c, child.c and child-signals.c; not part of the
 * core's interface. */
#ifndef NOSHELL_SPAWN_INTERNAL_H_
#define NOSHELL_SPAWN_INTERNAL_H_

#include "spawn.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* stat()/fstat() without glibc's stat64@GLIBC_2.33 symbols, so the prebuilt
 * addon loads on glibc 2.28 (issue 10). On these two the kernel's struct
 * stat is glibc's. */
#if defined(__x86_64__) || defined(__aarch64__)
static inline int noshell_stat(const char* path, struct stat* st) {
  return (int) syscall(SYS_newfstatat, AT_FDCWD, path, st, 0);
}
static inline int noshell_fstat(int fd, struct stat* st) {
  return (int) syscall(SYS_newfstatat, fd, "", st, AT_EMPTY_PATH);
}
static inline int noshell_fstatat(int dir, const char* name, struct stat* st, int flags) {
  return (int) syscall(SYS_newfstatat, dir, name, st, flags);
}
#else
static inline int noshell_stat(const char* path, struct stat* st) {
  return stat(path, st);
}
static inline int noshell_fstat(int fd, struct stat* st) {
  return fstat(fd, st);
}
static inline int noshell_fstatat(int dir, const char* name, struct stat* st, int flags) {
  return fstatat(dir, name, st, flags);
}
#endif

/* Code that runs in the clone/fork child: not instrumented by ASan (it runs
 * on the parent's memory, on a stack ASan does not know). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NO_SANITIZE __attribute__((no_sanitize_address))
#endif
#endif
#if !defined(NO_SANITIZE) && defined(__SANITIZE_ADDRESS__)
#define NO_SANITIZE __attribute__((no_sanitize_address))
#endif
#ifndef NO_SANITIZE
#define NO_SANITIZE
#endif

/* The SigIgn and SigCgt lines of /proc/self/status, read in pieces of any size. */
typedef struct {
  unsigned long long mask;   /* SigIgn | SigCgt of the fields read so far */
  unsigned long long value;  /* the value being read */
  int field;                 /* in a value: 1 SigIgn, 2 SigCgt; else 0 */
  int found;                 /* fields read, as bits */
  int digits;
  int col;                   /* characters of this line's prefix seen */
  char prefix[8];
} noshell_sigscan_t;

void noshell_sigscan_init(noshell_sigscan_t* s);
/* 1: both fields read (mask is set); -1: not the expected text; 0: more. */
int noshell_sigscan_feed(noshell_sigscan_t* s, const char* buf, size_t n);

/* In the child: every disposition that is not SIG_DFL back to SIG_DFL. */
void noshell_child_reset_signals(void);

typedef struct {
  int src[3];          /* fd that becomes the child's 0, 1, 2 */
  int close_after[6];  /* the child's pipe ends and moved fds */
  int nclose;
  int devnull;         /* the process-wide /dev/null, never closed */
} stdio_plan_t;

/* Opens pipes (the parent's ends go to child->fds) and works out
 * plan->src. Returns 0 or errno with child->step set. */
int noshell_plan_stdio(const noshell_spawn_t* req, noshell_child_t* child,
                       stdio_plan_t* plan);

/* clone(CLONE_VM|CLONE_VFORK), or fork() when use_fork is set. path NULL:
 * the child searches `search` for req->file itself (after changing its
 * credentials). cgroup_fd: an open cgroup.procs the child moves itself
 * into, or -1. */
int noshell_spawn_clone(const noshell_spawn_t* req, const char* path,
                        const char* search, const stdio_plan_t* plan,
                        int cgroup_fd, noshell_child_t* child, int use_fork);

#endif /* NOSHELL_SPAWN_INTERNAL_H_ */
