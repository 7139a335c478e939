/* The child's fds 0, 1, 2: pipes, /dev/null, the caller's fds, and a dup2
 * order that survives overlapping sources. */
#define _GNU_SOURCE
#include "spawn.h"
#include "spawn-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int is_devnull_rdwr(int fd) {
  struct stat st;
  int fl;
  return noshell_fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) &&
         st.st_rdev == makedev(1, 3) && (fl = fcntl(fd, F_GETFL)) >= 0 &&
         (fl & O_ACCMODE) == O_RDWR;
}

/* One O_RDWR|O_CLOEXEC /dev/null for the whole process, opened on first use
 * (an open() walks the path on every spawn otherwise). Checked before each
 * use: if someone closed our fd and the number now names something else, it
 * is theirs; we leave it alone and open another. */
static int shared_devnull(void) {
  static int cached = -1;
  int fd = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
  int fresh;
  if (fd >= 0 && is_devnull_rdwr(fd)) return fd;
  fresh = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (fresh < 0) return -1;
  if (!__atomic_compare_exchange_n(&cached, &fd, fresh, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    /* Another thread stored a fresh one meanwhile (now in fd): use that. */
    close(fresh);
    return fd;
  }
  return fresh;
}

/* Opens pipes and /dev/null, checks the caller's fds, and works out which fd
 * becomes the child's 0, 1 and 2 (plan->src). */
int noshell_plan_stdio(const noshell_spawn_t* req, noshell_child_t* child,
                       stdio_plan_t* plan) {
  int i;
  for (i = 0; i < 3; i++) {
    const noshell_stdio_t* s = &req->stdio[i];
    int p[2];
    switch (s->kind) {
      case NOSHELL_STDIO_PIPE:
        if (pipe2(p, O_CLOEXEC) != 0) {
          child->step = NOSHELL_STEP_PIPE;
          return errno;
        }
        /* fd 0 is read by the child; 1 and 2 are written by it. */
        plan->src[i] = i == 0 ? p[0] : p[1];
        child->fds[i] = i == 0 ? p[1] : p[0];
        plan->close_after[plan->nclose++] = plan->src[i];
        break;
      case NOSHELL_STDIO_IGNORE:
        if (plan->devnull < 0) {
          plan->devnull = shared_devnull();
          if (plan->devnull < 0) {
            child->step = NOSHELL_STEP_DEVNULL;
            return errno;
          }
        }
        plan->src[i] = plan->devnull;
        break;
      case NOSHELL_STDIO_INHERIT:
        plan->src[i] = i;
        break;
      case NOSHELL_STDIO_FD:
        if (s->fd < 0 || fcntl(s->fd, F_GETFD) < 0) {
          child->step = NOSHELL_STEP_STDIO;
          return EBADF;
        }
        plan->src[i] = s->fd;
        break;
      case NOSHELL_STDIO_STDOUT:
        if (i != 2) {
          child->step = NOSHELL_STEP_VALIDATE;
          return EINVAL;
        }
        /* The child's fd 1 is made from plan->src[1]; 2>&1 copies it. */
        plan->src[i] = plan->src[1];
        break;
      default:
        child->step = NOSHELL_STEP_VALIDATE;
        return EINVAL;
    }
    /* The child dup2()s onto 0, 1, 2 in order: a source that is a lower
     * target already overwritten would be read after it changed. Move it out
     * of the way first (only happens for odd requests like stdout: fd 0). */
    if (plan->src[i] < i && plan->src[plan->src[i]] != plan->src[i]) {
      int moved = fcntl(plan->src[i], F_DUPFD_CLOEXEC, 3);
      if (moved < 0) {
        child->step = NOSHELL_STEP_STDIO;
        return errno;
      }
      plan->src[i] = moved;
      plan->close_after[plan->nclose++] = moved;
    }
  }
  return 0;
}
