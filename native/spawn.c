/* noshell_spawn(): stdio plumbing, PATH resolution and the posix_spawn path.
 * The clone/vfork and fork paths live in child.c. */
#define _GNU_SOURCE
#include "spawn.h"
#include "spawn-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static const char* const step_names[NOSHELL_STEP_COUNT] = {
  "none", "validate", "resolve", "stdio", "pipe2", "open /dev/null",
  "posix_spawnattr", "spawn", "setpgid", "dup2", "chdir", "setgroups",
  "setgid", "setuid", "execve"
};

const char* noshell_step_name(noshell_step_t step) {
  if ((unsigned) step >= NOSHELL_STEP_COUNT) return "unknown";
  return step_names[step];
}

/* Whether execve() of `path` can work, checked as the parent. A relative
 * candidate is checked against the child's cwd (where execve will run), so
 * PATH entries like "." or "" mean what they mean to execvp in the child. */
static int is_exec_candidate(const char* path, const char* cwd,
                             int* saw_eacces) {
  char full[PATH_MAX];
  struct stat st;
  if (cwd != NULL && path[0] != '/') {
    int n = snprintf(full, sizeof(full), "%s/%s", cwd, path);
    if (n < 0 || (size_t) n >= sizeof(full)) return 0;
    path = full;
  }
  if (stat(path, &st) != 0) {
    if (errno == EACCES) *saw_eacces = 1;
    return 0;
  }
  /* execve() of a directory fails with EACCES; execvp skips it and says so. */
  if (S_ISDIR(st.st_mode) || access(path, X_OK) != 0) {
    *saw_eacces = 1;
    return 0;
  }
  return 1;
}

int noshell_resolve(const char* file, const char* search_path,
                    const char* cwd, char* buf, size_t len) {
  size_t flen = strlen(file);
  int saw_eacces = 0;
  const char* p;

  if (flen == 0) return ENOENT;
  if (strchr(file, '/') != NULL) {
    if (flen >= len) return ENAMETOOLONG;
    memcpy(buf, file, flen + 1);
    return 0;
  }
  if (flen > NAME_MAX) return ENAMETOOLONG;
  if (search_path == NULL) search_path = "/bin:/usr/bin";

  p = search_path;
  for (;;) {
    const char* end = strchrnul(p, ':');
    size_t dlen = (size_t) (end - p);
    /* An empty PATH entry means the current directory, as in execvp. */
    if (dlen == 0) {
      if (flen + 1 <= len) {
        memcpy(buf, file, flen + 1);
        if (is_exec_candidate(buf, cwd, &saw_eacces)) return 0;
      }
    } else if (dlen + 1 + flen + 1 <= len) {
      memcpy(buf, p, dlen);
      buf[dlen] = '/';
      memcpy(buf + dlen + 1, file, flen + 1);
      if (is_exec_candidate(buf, cwd, &saw_eacces)) return 0;
    }
    if (*end == '\0') break;
    p = end + 1;
  }
  return saw_eacces ? EACCES : ENOENT;
}

static int is_devnull_rdwr(int fd) {
  struct stat st;
  int fl;
  return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) &&
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
static int plan_stdio(const noshell_spawn_t* req, noshell_child_t* child,
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

/* posix_spawn reports one errno for every file action and the exec itself.
 * Tell a missing cwd apart from a missing program, only on the failure path. */
static noshell_step_t blame_posix_spawn(const noshell_spawn_t* req, int err) {
  struct stat st;
  if (req->cwd != NULL &&
      (err == ENOENT || err == ENOTDIR || err == EACCES || err == ELOOP ||
       err == ENAMETOOLONG)) {
    if (stat(req->cwd, &st) != 0 || !S_ISDIR(st.st_mode) ||
        access(req->cwd, X_OK) != 0)
      return NOSHELL_STEP_CHDIR;
  }
  if (err == ENOMEM || err == EAGAIN) return NOSHELL_STEP_CLONE;
  return NOSHELL_STEP_EXEC;
}

static int spawn_posix(const noshell_spawn_t* req, const char* path,
                       const stdio_plan_t* plan, noshell_child_t* child) {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t fa;
  sigset_t none, all;
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  int err;
  int i;

  /* Node ignores SIGPIPE; SETSIGDEF over every signal puts SIG_IGN ones back
   * to SIG_DFL in the child, so a child writing to a closed pipe dies. */
  sigemptyset(&none);
  /* Not sigfillset(): it leaves out glibc's internal signals (32, 33), and
   * glibc's spawn child then sets those to SIG_IGN, which execve() keeps.
   * Every bit set gets all of them back to SIG_DFL. */
  memset(&all, 0xff, sizeof(all));
  if (req->flags & NOSHELL_NEW_PGROUP) flags |= POSIX_SPAWN_SETPGROUP;

  err = posix_spawnattr_init(&attr);
  if (err != 0) {
    child->step = NOSHELL_STEP_ATTR;
    return err;
  }
  err = posix_spawn_file_actions_init(&fa);
  if (err != 0) {
    posix_spawnattr_destroy(&attr);
    child->step = NOSHELL_STEP_ATTR;
    return err;
  }

  if ((err = posix_spawnattr_setflags(&attr, flags)) != 0 ||
      (err = posix_spawnattr_setsigmask(&attr, &none)) != 0 ||
      (err = posix_spawnattr_setsigdefault(&attr, &all)) != 0 ||
      (err = posix_spawnattr_setpgroup(&attr, 0)) != 0)
    goto fail_attr;

  /* dup2 onto the same fd clears FD_CLOEXEC (glibc >= 2.29), which is what
   * inheriting one of the parent's 0-2 needs. */
  for (i = 0; i < 3; i++)
    if ((err = posix_spawn_file_actions_adddup2(&fa, plan->src[i], i)) != 0)
      goto fail_attr;
  /* Only 0-2 survive into the child, whatever the parent forgot to CLOEXEC. */
  if ((err = posix_spawn_file_actions_addclosefrom_np(&fa, 3)) != 0)
    goto fail_attr;
  if (req->cwd != NULL &&
      (err = posix_spawn_file_actions_addchdir_np(&fa, req->cwd)) != 0)
    goto fail_attr;

  err = posix_spawn(&child->pid, path, &fa, &attr, req->argv,
                    req->envp != NULL ? req->envp : environ);
  if (err != 0) child->step = blame_posix_spawn(req, err);
  goto done;

fail_attr:
  child->step = NOSHELL_STEP_ATTR;
done:
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return err;
}

static void close_fd(int fd) {
  /* close() must not be retried on EINTR on Linux: the fd is gone either way. */
  if (fd >= 0) close(fd);
}

int noshell_spawn(const noshell_spawn_t* req, noshell_child_t* child) {
  char path[PATH_MAX];
  stdio_plan_t plan;
  noshell_method_t method = req->method;
  int err;
  int i;

  child->pid = -1;
  child->fds[0] = child->fds[1] = child->fds[2] = -1;
  child->step = NOSHELL_STEP_NONE;
  plan.nclose = 0;
  plan.devnull = -1;

  if (req->file == NULL || req->argv == NULL || req->argv[0] == NULL) {
    child->step = NOSHELL_STEP_VALIDATE;
    return EINVAL;
  }
  if (method == NOSHELL_METHOD_AUTO) {
    /* posix_spawn cannot change credentials; clone(CLONE_VFORK) costs the
     * same (glibc's posix_spawn is clone(CLONE_VM|CLONE_VFORK) underneath). */
    method = (req->flags & (NOSHELL_SET_UID | NOSHELL_SET_GID))
                 ? NOSHELL_METHOD_VFORK
                 : NOSHELL_METHOD_POSIX_SPAWN;
  } else if (method == NOSHELL_METHOD_POSIX_SPAWN &&
             (req->flags & (NOSHELL_SET_UID | NOSHELL_SET_GID))) {
    child->step = NOSHELL_STEP_VALIDATE;
    return ENOTSUP;
  } else if (method < NOSHELL_METHOD_AUTO || method > NOSHELL_METHOD_FORK) {
    child->step = NOSHELL_STEP_VALIDATE;
    return EINVAL;
  }
  child->method = method;

  /* Inheriting environ (envp NULL): search the PATH the child will have. */
  err = noshell_resolve(req->file,
                        req->envp == NULL && req->search_path == NULL
                            ? getenv("PATH")
                            : req->search_path,
                        req->cwd, path, sizeof(path));
  if (err != 0) {
    child->step = NOSHELL_STEP_RESOLVE;
    return err;
  }

  err = plan_stdio(req, child, &plan);
  if (err == 0) {
    if (method == NOSHELL_METHOD_POSIX_SPAWN)
      err = spawn_posix(req, path, &plan, child);
    else
      err = noshell_spawn_clone(req, path, &plan, child,
                                method == NOSHELL_METHOD_FORK);
  }

  /* plan.devnull is the shared one: it stays open. */
  for (i = 0; i < plan.nclose; i++) close_fd(plan.close_after[i]);
  if (err != 0) {
    for (i = 0; i < 3; i++) {
      close_fd(child->fds[i]);
      child->fds[i] = -1;
    }
    child->pid = -1;
  }
  return err;
}
