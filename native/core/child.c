/* The clone(CLONE_VM|CLONE_VFORK) and fork() paths.
 *
 * The child shares the parent's memory (clone) or is a copy of a threaded
 * process (fork): either way it may only make system calls until execve().
 * It makes them through raw syscall(), never glibc's wrappers: those are
 * symbols anything preloaded can replace (an execve logger in
 * /etc/ld.so.preload, a signal-chaining library, fakeroot), and such code
 * would run in the child on the parent's memory (glibc's posix_spawn child
 * calls glibc-internal functions only). glibc's sigaction() also refuses its
 * own signals 32 and 33, and setuid()/setgid()/setgroups() broadcast to
 * every thread of the process (SIGSETXID), which would reach the parent's
 * threads from a CLONE_VM child. */
#define _GNU_SOURCE
#include "spawn.h"
#include "spawn-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

#define CHILD_STACK_SIZE (64 * 1024)

typedef struct {
  const noshell_spawn_t* req;
  const char* path;    /* NULL: search `search` for req->file */
  const char* search;
  const int* src;
  int err_fd;          /* fork: CLOEXEC pipe for {errno, step}; else -1 */
  int cgroup_fd;       /* cgroup.procs to move into, or -1 */
  pid_t parent;        /* our pid: the child's getppid() while we live */
  volatile int err;    /* clone: written by the child, read after it execs */
  volatile int step;
  volatile int detail; /* the redirection being applied, or -1 */
} child_ctx_t;

/* The child's system calls (see the top of the file). dup3() and openat():
 * arm64 has no dup2 or open. */
#define sys_close(fd) syscall(SYS_close, (fd))
#define sys_fcntl(fd, cmd, arg) syscall(SYS_fcntl, (fd), (cmd), (arg))
#define sys_dup_to(from, to) syscall(SYS_dup3, (from), (to), 0)
#define sys_open_dir(path) \
  syscall(SYS_openat, AT_FDCWD, (path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)

NO_SANITIZE __attribute__((noreturn)) static void child_fail(child_ctx_t* ctx,
                                                    noshell_step_t step) {
  int msg[3];
  msg[0] = errno;
  msg[1] = (int) step;
  msg[2] = ctx->detail;
  ctx->err = msg[0];
  ctx->step = msg[1];
  if (ctx->err_fd >= 0) {
    long n;
    do
      n = syscall(SYS_write, ctx->err_fd, msg, sizeof(msg));
    while (n < 0 && errno == EINTR);
  }
  for (;;) syscall(SYS_exit_group, 127);
}

/* Closes every fd >= lowfd but keep by listing /proc/self/fd (kernels
 * before 5.9 have no close_range): a loop up to RLIMIT_NOFILE would make up
 * to a million close() calls while the parent waits (containers often set
 * the limit that high). Closing while reading the directory can make it skip
 * entries, so it is read again until a pass finds nothing to close.
 * Returns -1 when /proc is not there. */
NO_SANITIZE static int close_listed(int lowfd, int keep) {
  char buf[4096] __attribute__((aligned(8)));
  int dir = (int) sys_open_dir("/proc/self/fd");
  int closed;
  int passes = 0;
  if (dir < 0) return -1;
  do {
    long n;
    closed = 0;
    if (syscall(SYS_lseek, dir, 0L, SEEK_SET) != 0) break;
    while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
      long off = 0;
      while (off < n) {
        /* struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name */
        unsigned short reclen;
        const char* name = buf + off + 19;
        int fd = 0;
        memcpy(&reclen, buf + off + 16, sizeof(reclen));
        off += reclen;
        if (*name < '0' || *name > '9') continue; /* "." and ".." */
        for (; *name >= '0' && *name <= '9' && fd < INT_MAX / 10; name++)
          fd = fd * 10 + (*name - '0');
        /* Only a close that worked asks for another pass: an fd that
         * cannot be closed (valgrind keeps its own) would loop forever. */
        if (fd >= lowfd && fd != keep && fd != dir && sys_close(fd) == 0)
          closed = 1;
      }
    }
  } while (closed && ++passes < 64);
  sys_close(dir);
  return 0;
}

/* close_range() skipping one fd (the fork error pipe), with fallbacks for
 * kernels before 5.9. */
NO_SANITIZE static void close_from(int lowfd, int keep) {
#ifdef SYS_close_range
  if (!(noshell_forced & NOSHELL_FALLBACK_CLOSE_RANGE)) {
    if (keep < lowfd) {
      if (syscall(SYS_close_range, lowfd, ~0U, 0) == 0) return;
    } else if ((keep == lowfd ||
                syscall(SYS_close_range, lowfd, keep - 1, 0) == 0) &&
               syscall(SYS_close_range, keep + 1, ~0U, 0) == 0) {
      return;
    }
  }
#endif
  if (close_listed(lowfd, keep) == 0) return;
  {
    /* No /proc either: every possible fd, up to RLIMIT_NOFILE. */
    struct rlimit rl;
    long max = 65536;
    int fd;
    if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) == 0 &&
        rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t) INT_MAX)
      max = (long) rl.rlim_cur;
    for (fd = lowfd; fd < max; fd++)
      if (fd != keep) sys_close(fd);
  }
}

/* Drops supplementary groups (or sets the requested ones), then gid, then
 * uid. A failed setgroups() is an error: the child would otherwise keep
 * the parent's groups (root's, usually). The one exception: an unprivileged
 * caller that asks for its own ids and names no groups (not even an empty
 * list) changes nothing and may not call setgroups() at all. */
NO_SANITIZE static void set_credentials(child_ctx_t* ctx) {
  const noshell_spawn_t* req = ctx->req;
  if (syscall(SYS_setgroups, req->ngroups, req->groups) != 0) {
    int same = errno == EPERM && !(req->flags & NOSHELL_SET_GROUPS) &&
               (!(req->flags & NOSHELL_SET_UID) ||
                (uid_t) syscall(SYS_geteuid) == req->uid) &&
               (!(req->flags & NOSHELL_SET_GID) ||
                (gid_t) syscall(SYS_getegid) == req->gid);
    if (!same) child_fail(ctx, NOSHELL_STEP_SETGROUPS);
  }
  if ((req->flags & NOSHELL_SET_GID) && syscall(SYS_setgid, req->gid) != 0)
    child_fail(ctx, NOSHELL_STEP_SETGID);
  if ((req->flags & NOSHELL_SET_UID) && syscall(SYS_setuid, req->uid) != 0)
    child_fail(ctx, NOSHELL_STEP_SETUID);
}

/* Resource limits, as prlimit64 takes them on every architecture (rlim_t is
 * 32 bits on some). Set before the credential switch, which may take the
 * right to raise a hard limit away. */
typedef struct {
  unsigned long long cur;
  unsigned long long max;
} child_rlimit64_t;

NO_SANITIZE static void set_rlimits(child_ctx_t* ctx) {
  const noshell_spawn_t* req = ctx->req;
  size_t i;
  for (i = 0; i < req->nrlimits; i++) {
    const noshell_rlimit_t* l = &req->rlimits[i];
    child_rlimit64_t rl;
    if ((l->soft == NOSHELL_RLIM_KEEP || l->hard == NOSHELL_RLIM_KEEP) &&
        syscall(SYS_prlimit64, 0, l->resource, NULL, &rl) != 0)
      child_fail(ctx, NOSHELL_STEP_SETRLIMIT);
    if (l->soft != NOSHELL_RLIM_KEEP) rl.cur = l->soft;
    if (l->hard != NOSHELL_RLIM_KEEP) rl.max = l->hard;
    if (syscall(SYS_prlimit64, 0, l->resource, &rl, NULL) != 0)
      child_fail(ctx, NOSHELL_STEP_SETRLIMIT);
  }
}

/* PR_SET_PDEATHSIG: after the credential switch (which clears it). The
 * "parent" is the thread that cloned us; if the whole process died before
 * the prctl, we were reparented already and no signal would ever come:
 * getppid() tells. */
NO_SANITIZE static void set_death_signal(child_ctx_t* ctx) {
  if (syscall(SYS_prctl, PR_SET_PDEATHSIG, (unsigned long) ctx->req->death_signal, 0UL,
              0UL, 0UL) != 0)
    child_fail(ctx, NOSHELL_STEP_PDEATHSIG);
  if ((pid_t) syscall(SYS_getppid) != ctx->parent) {
    errno = ESRCH;
    child_fail(ctx, NOSHELL_STEP_PDEATHSIG);
  }
}

/* The shell's redirections, in order, as the child's user, relative to its
 * cwd. Opened O_CLOEXEC and moved onto their number (dup3 clears the flag
 * there); one that lands on its number already gets the flag cleared. The
 * fork path's error pipe moves above 9 first: no redirection may hit it.
 *
 * Never blocking: the thread that started us waits for our execve
 * (CLONE_VFORK), so an open() that waits (a FIFO without a peer, a serial
 * line without carrier) would stall it, timeouts included. Opened
 * O_NONBLOCK, then put back to blocking. A FIFO opened for writing with no
 * reader is ENXIO (dash would wait for one); one opened only for reading is
 * refused with ENXIO too, since whether a writer will ever come cannot be
 * told without waiting for it. */
NO_SANITIZE static void apply_redirects(child_ctx_t* ctx) {
  const noshell_spawn_t* req = ctx->req;
  size_t i;
  if (ctx->err_fd >= 0 && ctx->err_fd < 10) {
    long moved = sys_fcntl(ctx->err_fd, F_DUPFD_CLOEXEC, 10);
    if (moved < 0) child_fail(ctx, NOSHELL_STEP_REDIRECT);
    sys_close(ctx->err_fd);
    ctx->err_fd = (int) moved;
  }
  for (i = 0; i < req->nredirects; i++) {
    const noshell_redirect_t* r = &req->redirects[i];
    long fd;
    ctx->detail = (int) i;
    switch (r->kind) {
      case NOSHELL_REDIRECT_OPEN: {
        struct stat st;
        long fl;
        do
          fd = syscall(SYS_openat, AT_FDCWD, r->path,
                       r->oflags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0666);
        while (fd < 0 && errno == EINTR);
        if (fd < 0) child_fail(ctx, NOSHELL_STEP_REDIRECT);
        if (noshell_fstat((int) fd, &st) != 0) child_fail(ctx, NOSHELL_STEP_REDIRECT);
        if (S_ISFIFO(st.st_mode) && (r->oflags & O_ACCMODE) == O_RDONLY) {
          errno = ENXIO;
          child_fail(ctx, NOSHELL_STEP_REDIRECT);
        }
        fl = sys_fcntl(fd, F_GETFL, 0);
        if (fl < 0 || sys_fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
          child_fail(ctx, NOSHELL_STEP_REDIRECT);
        if (fd == r->fd) {
          if (sys_fcntl(fd, F_SETFD, 0) != 0) child_fail(ctx, NOSHELL_STEP_REDIRECT);
        } else {
          if (sys_dup_to(fd, r->fd) < 0) child_fail(ctx, NOSHELL_STEP_REDIRECT);
          sys_close(fd);
        }
        break;
      }
      case NOSHELL_REDIRECT_DUP:
        /* N>&N changes nothing, open or not: dash skips it. */
        if (r->src != r->fd && sys_dup_to(r->src, r->fd) < 0)
          child_fail(ctx, NOSHELL_STEP_REDIRECT);
        break;
      default:
        sys_close(r->fd);
    }
  }
  ctx->detail = -1;
}

/* execvp() as the child's (new) credentials see the PATH: skip entries where
 * the program is missing, remember EACCES, stop at any other error; never
 * fall back to /bin/sh on ENOEXEC. */
NO_SANITIZE static void exec_search(child_ctx_t* ctx, char* const* envp) {
  const noshell_spawn_t* req = ctx->req;
  char buf[PATH_MAX];
  size_t flen = strlen(req->file);
  const char* p = ctx->search;
  int saw_eacces = 0;
  for (;;) {
    const char* end = strchrnul(p, ':');
    size_t dlen = (size_t) (end - p);
    /* An empty entry is the current directory (the child's: chdir is done). */
    if (dlen + 1 + flen + 1 <= sizeof(buf)) {
      memcpy(buf, p, dlen);
      if (dlen > 0) buf[dlen++] = '/';
      memcpy(buf + dlen, req->file, flen + 1);
      syscall(SYS_execve, buf, req->argv, envp);
      switch (errno) {
        case EACCES:
          saw_eacces = 1;
          break;
        case ENOENT:
        case ENOTDIR:
        case ESTALE:
        case ENODEV:
        case ETIMEDOUT:
          break;
        default:
          child_fail(ctx, NOSHELL_STEP_EXEC);
      }
    }
    if (*end == '\0') break;
    p = end + 1;
  }
  errno = saw_eacces ? EACCES : ENOENT;
  child_fail(ctx, NOSHELL_STEP_RESOLVE);
}

NO_SANITIZE static int child_main(void* arg) {
  child_ctx_t* ctx = (child_ctx_t*) arg;
  const noshell_spawn_t* req = ctx->req;
  sigset_t none;
  int i;

  /* Before any signal is unblocked (child-signals.c). */
  noshell_child_reset_signals();

  if (req->flags & NOSHELL_NEW_SESSION) {
    /* Leads its session and its group: no setpgid (a leader may not). */
    if (syscall(SYS_setsid) < 0) child_fail(ctx, NOSHELL_STEP_SETSID);
  } else if ((req->flags & NOSHELL_JOIN_PGROUP) ? syscall(SYS_setpgid, 0, req->pgid) != 0
                                                 : ((req->flags & NOSHELL_NEW_PGROUP) &&
                                                    syscall(SYS_setpgid, 0, 0) != 0)) {
    child_fail(ctx, NOSHELL_STEP_SETPGID);
  }

  /* Into the cgroup first: whatever the child does from here on is
   * accounted there (and limited by it). "0" is the writer itself. */
  if (ctx->cgroup_fd >= 0) {
    long n;
    do
      n = syscall(SYS_write, ctx->cgroup_fd, "0", 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) child_fail(ctx, NOSHELL_STEP_CGROUP);
  }

  for (i = 0; i < 3; i++) {
    if (ctx->src[i] == i) {
      /* Inheriting: make sure it survives execve(). */
      long fl = sys_fcntl(i, F_GETFD, 0);
      if (fl < 0 || ((fl & FD_CLOEXEC) && sys_fcntl(i, F_SETFD, fl & ~FD_CLOEXEC)))
        child_fail(ctx, NOSHELL_STEP_DUP2);
    } else if (sys_dup_to(ctx->src[i], i) < 0) {
      child_fail(ctx, NOSHELL_STEP_DUP2);
    }
  }
  close_from(3, ctx->err_fd);

  if (req->cwd != NULL && syscall(SYS_chdir, req->cwd) != 0)
    child_fail(ctx, NOSHELL_STEP_CHDIR);

  if (req->nrlimits > 0) set_rlimits(ctx);

  /* Before the switch too: a lower nice than ours needs the privilege the
   * switch drops. The SCHED_OTHER reset below keeps it. */
  if ((req->flags & NOSHELL_SET_NICE) &&
      syscall(SYS_setpriority, PRIO_PROCESS, 0, req->nice) != 0)
    child_fail(ctx, NOSHELL_STEP_SETPRIORITY);

  if (req->flags & (NOSHELL_SET_UID | NOSHELL_SET_GID)) set_credentials(ctx);

  if (req->nredirects > 0) apply_redirects(ctx);

  if (req->flags & NOSHELL_RESET_SCHED) {
    /* Best effort: SCHED_BATCH -> SCHED_OTHER is always allowed. */
    struct sched_param sp;
    memset(&sp, 0, sizeof(sp));
    syscall(SYS_sched_setscheduler, 0, SCHED_OTHER, &sp);
  }

  if (req->flags & NOSHELL_DIE_WITH_PARENT) set_death_signal(ctx);

  sigemptyset(&none);
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, NSIG / 8);

  if (ctx->path == NULL)
    exec_search(ctx, req->envp != NULL ? req->envp : environ);
  syscall(SYS_execve, ctx->path, req->argv, req->envp != NULL ? req->envp : environ);
  child_fail(ctx, NOSHELL_STEP_EXEC);
  return 127;
}

static void reap(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

int noshell_spawn_clone(const noshell_spawn_t* req, const char* path,
                        const char* search, const stdio_plan_t* plan,
                        int cgroup_fd, noshell_child_t* child, int use_fork) {
  /* CLONE_VFORK suspends us until the child execs or exits, so the child can
   * run on a stack carved out of this frame (as musl's posix_spawn does). */
  char stack[CHILD_STACK_SIZE] __attribute__((aligned(16)));
  child_ctx_t ctx;
  sigset_t all, old;
  int errpipe[2] = {-1, -1};
  pid_t pid;
  int err = 0;

  ctx.req = req;
  ctx.path = path;
  ctx.search = search;
  ctx.src = plan->src;
  ctx.err_fd = -1;
  ctx.cgroup_fd = cgroup_fd;
  ctx.parent = (req->flags & NOSHELL_DIE_WITH_PARENT) ? getpid() : 0;
  ctx.err = 0;
  ctx.step = NOSHELL_STEP_NONE;
  ctx.detail = -1;

  if (use_fork) {
    if (pipe2(errpipe, O_CLOEXEC) != 0) {
      child->step = NOSHELL_STEP_PIPE;
      return errno;
    }
    ctx.err_fd = errpipe[1];
  }

  /* Block everything, glibc's internal signals (32, 33) too: sigfillset()
   * and glibc's wrappers leave those out, hence memset and the raw syscall.
   * Nothing may run a handler in the child before child_main() resets them. */
  memset(&all, 0xff, sizeof(all));
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, NSIG / 8);
  if (use_fork) {
    pid = fork();
    if (pid == 0) child_main(&ctx);
  } else {
    pid = clone(child_main, stack + sizeof(stack),
                CLONE_VM | CLONE_VFORK | SIGCHLD, &ctx);
  }
  if (pid < 0) err = errno;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, NSIG / 8);

  if (pid < 0) {
    child->step = NOSHELL_STEP_CLONE;
  } else if (use_fork) {
    int msg[3];
    ssize_t n;
    close(errpipe[1]);
    errpipe[1] = -1;
    /* EOF: execve() closed the CLOEXEC pipe, the child runs the program. */
    do
      n = read(errpipe[0], msg, sizeof(msg));
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t) sizeof(msg)) {
      err = msg[0];
      child->step = (noshell_step_t) msg[1];
      child->detail = msg[2];
      reap(pid);
    }
  } else if (ctx.err != 0) {
    err = ctx.err;
    child->step = (noshell_step_t) ctx.step;
    child->detail = ctx.detail;
    reap(pid);
  }

  if (errpipe[0] >= 0) close(errpipe[0]);
  if (errpipe[1] >= 0) close(errpipe[1]);
  if (err == 0) child->pid = pid;
  return err;
}
