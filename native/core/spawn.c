/* noshell_spawn(): the request's checks and the posix_spawn path. Stdio
 * plumbing is in stdio.c, PATH resolution in resolve.c, the clone/vfork and
 * fork paths in child.c. */
#define _GNU_SOURCE
#include "spawn.h"
#include "spawn-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static const char* const step_names[NOSHELL_STEP_COUNT] = {
  "none", "validate", "resolve", "stdio", "pipe2", "open /dev/null",
  "posix_spawnattr", "spawn", "setpgid", "dup2", "chdir", "setgroups",
  "setgid", "setuid", "execve", "capture", "setsid", "cgroup", "setrlimit",
  "setpriority", "pdeathsig", "redirect"
};

unsigned noshell_forced = 0;

void* noshell_addclosefrom_np = NULL;
void* noshell_addchdir_np = NULL;

typedef int (*addclosefrom_fn)(posix_spawn_file_actions_t*, int);
typedef int (*addchdir_fn)(posix_spawn_file_actions_t*, const char*);

static addclosefrom_fn closefrom_np(void) {
  if (noshell_forced & NOSHELL_FALLBACK_SPAWN_NP) return NULL;
  return (addclosefrom_fn) noshell_addclosefrom_np;
}

static addchdir_fn chdir_np(void) {
  if (noshell_forced & NOSHELL_FALLBACK_SPAWN_NP) return NULL;
  return (addchdir_fn) noshell_addchdir_np;
}

/* Without addclosefrom_np: close, in the child, every fd >= 3 that would
 * survive execve (no FD_CLOEXEC), as listed in /proc/self/fd now. */
static int add_close_inherited(posix_spawn_file_actions_t* fa) {
  char buf[4096] __attribute__((aligned(8)));
  int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  long n;
  int err = 0;
  if (dir < 0) return errno;
  while (err == 0 && (n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
    long off = 0;
    while (err == 0 && off < n) {
      unsigned short reclen;
      const char* name = buf + off + 19; /* linux_dirent64.d_name */
      int fd = 0;
      int fl;
      memcpy(&reclen, buf + off + 16, sizeof(reclen));
      off += reclen;
      if (*name < '0' || *name > '9') continue;
      for (; *name >= '0' && *name <= '9' && fd < INT_MAX / 10; name++)
        fd = fd * 10 + (*name - '0');
      if (fd < 3 || fd == dir) continue;
      fl = fcntl(fd, F_GETFD);
      if (fl >= 0 && !(fl & FD_CLOEXEC))
        err = posix_spawn_file_actions_addclose(fa, fd);
    }
  }
  close(dir);
  return err;
}

const char* noshell_step_name(noshell_step_t step) {
  if ((unsigned) step >= NOSHELL_STEP_COUNT) return "unknown";
  return step_names[step];
}

/* posix_spawn reports one errno for every file action and the exec itself.
 * Tell a missing cwd apart from a missing program, only on the failure path. */
static noshell_step_t blame_posix_spawn(const noshell_spawn_t* req, int err) {
  struct stat st;
  if (req->cwd != NULL &&
      (err == ENOENT || err == ENOTDIR || err == EACCES || err == ELOOP ||
       err == ENAMETOOLONG)) {
    if (noshell_stat(req->cwd, &st) != 0 || !S_ISDIR(st.st_mode) ||
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
  /* A session leader leads its own group already (and may not setpgid). */
  if (req->flags & NOSHELL_NEW_SESSION) flags |= POSIX_SPAWN_SETSID;
  else if (req->flags & (NOSHELL_NEW_PGROUP | NOSHELL_JOIN_PGROUP)) flags |= POSIX_SPAWN_SETPGROUP;
  if (req->flags & NOSHELL_RESET_SCHED) flags |= POSIX_SPAWN_SETSCHEDULER;

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
      (err = posix_spawnattr_setpgroup(
           &attr, (req->flags & NOSHELL_JOIN_PGROUP) ? req->pgid : 0)) != 0)
    goto fail_attr;
  if (req->flags & NOSHELL_RESET_SCHED) {
    struct sched_param sp;
    memset(&sp, 0, sizeof(sp));
    if ((err = posix_spawnattr_setschedpolicy(&attr, SCHED_OTHER)) != 0 ||
        (err = posix_spawnattr_setschedparam(&attr, &sp)) != 0)
      goto fail_attr;
  }

  /* dup2 onto the same fd clears FD_CLOEXEC (glibc >= 2.29), which is what
   * inheriting one of the parent's 0-2 needs. */
  for (i = 0; i < 3; i++)
    if ((err = posix_spawn_file_actions_adddup2(&fa, plan->src[i], i)) != 0)
      goto fail_attr;
  /* Only 0-2 survive into the child, whatever the parent forgot to CLOEXEC. */
  err = closefrom_np() != NULL ? closefrom_np()(&fa, 3) : add_close_inherited(&fa);
  if (err != 0) goto fail_attr;
  if (req->cwd != NULL && chdir_np() == NULL) {
    /* Only 'posix_spawn' asked for by name gets here ('auto' took vfork). */
    err = ENOTSUP;
    child->step = NOSHELL_STEP_CHDIR;
    goto done;
  }
  if (req->cwd != NULL &&
      (err = chdir_np()(&fa, req->cwd)) != 0)
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

/* What glibc's posix_spawn has no attribute for. */
#define POSIX_SPAWN_CANNOT                                                  \
  (NOSHELL_SET_UID | NOSHELL_SET_GID | NOSHELL_DIE_WITH_PARENT |            \
   NOSHELL_SET_NICE | NOSHELL_SET_CGROUP)

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Reads a small file at dir/name (O_NOFOLLOW) into buf, NUL-terminated;
 * -1 when it cannot be opened or read. */
static ssize_t read_at(int dir, const char* name, char* buf, size_t len) {
  int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  ssize_t n;
  if (fd < 0) return -1;
  do
    n = read(fd, buf, len - 1);
  while (n < 0 && errno == EINTR);
  close(fd);
  if (n < 0) return -1;
  buf[n] = '\0';
  return n;
}

/* Text without surrounding blanks and line ends. */
static const char* trimmed(char* s) {
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
  while (*s == ' ' || *s == '\t') s++;
  return s;
}

/* This process's memory nodes as /proc/self/status lists them ("0-1"). */
static int own_mems(char* out, size_t len) {
  char buf[4096];
  static const char key[] = "Mems_allowed_list:";
  size_t have = 0;
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  int found = -1;
  if (fd < 0) return -1;
  /* Line by line through a window: the Groups line can be long. */
  for (;;) {
    ssize_t n;
    char* nl;
    do
      n = read(fd, buf + have, sizeof(buf) - 1 - have);
    while (n < 0 && errno == EINTR);
    if (n <= 0) break;
    have += (size_t) n;
    buf[have] = '\0';
    while ((nl = memchr(buf, '\n', have)) != NULL) {
      *nl = '\0';
      if (strncmp(buf, key, sizeof(key) - 1) == 0) {
        snprintf(out, len, "%s", trimmed(buf + sizeof(key) - 1));
        found = 0;
        break;
      }
      have -= (size_t) (nl + 1 - buf);
      memmove(buf, nl + 1, have);
    }
    if (found == 0) break;
    if (have == sizeof(buf) - 1) have = 0; /* a line longer than the window: not ours */
  }
  close(fd);
  return found;
}

/* Whether another user could freeze dir or a cgroup above it: a
 * cgroup.freeze not root's or ours, or writable by group or others. A
 * frozen child never reaches execve, and the thread that started it waits
 * for that execve (CLONE_VFORK) with no way out. Also compares the memory
 * nodes of the nearest cpuset with ours: the kernel moves a joining
 * process's memory to its cpuset's nodes, and until execve the child's
 * memory is this process's. 0, EPERM or EXDEV. */
static int check_cgroup_chain(int dir) {
  uid_t me = geteuid();
  int cur = dup(dir);
  int depth;
  int mems_seen = 0;
  int err = 0;
  if (cur < 0) return errno;
  for (depth = 0; depth < 256 && err == 0; depth++) {
    struct stat st;
    struct statfs sf;
    char mems[256];
    int up;
    if (noshell_fstatat(cur, "cgroup.freeze", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        ((st.st_uid != 0 && st.st_uid != me) || (st.st_mode & (S_IWGRP | S_IWOTH))))
      err = EPERM;
    if (err == 0 && !mems_seen && read_at(cur, "cpuset.mems.effective", mems, sizeof(mems)) >= 0) {
      char own[256];
      mems_seen = 1;
      if (own_mems(own, sizeof(own)) == 0 && strcmp(trimmed(mems), own) != 0) err = EXDEV;
    }
    if (err != 0) break;
    up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    close(cur);
    cur = up;
    /* Above the cgroup2 mount: done. */
    if (cur < 0 || fstatfs(cur, &sf) != 0 || (unsigned long) sf.f_type != CGROUP2_SUPER_MAGIC) break;
  }
  if (cur >= 0) close(cur);
  return err;
}

/* <dir>/cgroup.procs, opened here with our credentials (the kernel checks a
 * move against the opener's): the child writes "0" to it, moving itself,
 * before it touches its stdio, limits or user. Refused before any child
 * exists: ENOTSUP when dir is not on cgroup2 (a v1 hierarchy, no cgroup) or
 * its cgroup.procs is not a regular file (a symlink, a FIFO planted there);
 * EBUSY when it is frozen; EPERM and EXDEV as check_cgroup_chain says. The
 * fd is never one of 0-2, which the child's stdio plan may name as
 * inherited. */
static int open_cgroup_procs(const char* dir, int* out) {
  struct statfs sf;
  struct stat st;
  char events[512];
  int dfd, fd, err = 0;
  dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return errno;
  if (fstatfs(dfd, &sf) != 0 || (unsigned long) sf.f_type != CGROUP2_SUPER_MAGIC) {
    close(dfd);
    return ENOTSUP;
  }
  fd = openat(dfd, "cgroup.procs", O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) err = errno == ELOOP || errno == ENOENT || errno == ENXIO ? ENOTSUP : errno;
  else if (noshell_fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) err = ENOTSUP;
  /* "frozen 1": this cgroup or one above it is frozen now. */
  if (err == 0 && read_at(dfd, "cgroup.events", events, sizeof(events)) >= 0 &&
      (strncmp(events, "frozen 1", 8) == 0 || strstr(events, "\nfrozen 1") != NULL))
    err = EBUSY;
  if (err == 0) err = check_cgroup_chain(dfd);
  close(dfd);
  if (err == 0 && fd < 3) {
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (moved < 0) err = errno;
    close(fd);
    fd = moved;
  }
  if (err != 0) {
    if (fd >= 0) close(fd);
    return err;
  }
  *out = fd;
  return 0;
}

/* Redirections name fds 0-9, as the shell's do; an open names a path. */
static int redirects_valid(const noshell_spawn_t* req) {
  size_t i;
  if (req->nredirects == 0) return 1;
  if (req->redirects == NULL) return 0;
  for (i = 0; i < req->nredirects; i++) {
    const noshell_redirect_t* r = &req->redirects[i];
    if (r->fd < 0 || r->fd > 9) return 0;
    if (r->kind == NOSHELL_REDIRECT_OPEN ? r->path == NULL
        : r->kind == NOSHELL_REDIRECT_DUP ? (r->src < 0 || r->src > 9)
        : r->kind != NOSHELL_REDIRECT_CLOSE)
      return 0;
  }
  return 1;
}

static void close_fd(int fd) {
  /* close() must not be retried on EINTR on Linux: the fd is gone either way. */
  if (fd >= 0) close(fd);
}

int noshell_spawn(const noshell_spawn_t* req, noshell_child_t* child) {
  char path[PATH_MAX];
  stdio_plan_t plan;
  noshell_method_t method = req->method;
  const char* search;
  int cgroup_fd = -1;
  int err;
  int i;

  child->pid = -1;
  child->fds[0] = child->fds[1] = child->fds[2] = -1;
  child->step = NOSHELL_STEP_NONE;
  child->detail = -1;
  plan.nclose = 0;
  plan.devnull = -1;

  if (req->file == NULL || req->argv == NULL || req->argv[0] == NULL ||
      !redirects_valid(req) ||
      ((req->flags & NOSHELL_JOIN_PGROUP) && (req->pgid <= 0 || (req->flags & NOSHELL_NEW_SESSION)))) {
    child->step = NOSHELL_STEP_VALIDATE;
    return EINVAL;
  }
  if (method == NOSHELL_METHOD_AUTO) {
    /* Our clone(CLONE_VM|CLONE_VFORK) on a stack carved from this frame:
     * glibc's posix_spawn is the same clone underneath, but maps and unmaps
     * a child stack per spawn (the munmap sends TLB-shootdown IPIs to every
     * CPU running one of our threads) and reads rlimits around it. Measured
     * side by side (/bin/true): 12 % less CPU per exec one at a time, 18-22 %
     * at 16 in flight. It also changes credentials, closes fds and changes
     * directory on any glibc. 'posix_spawn' by name stays glibc's. */
    method = NOSHELL_METHOD_VFORK;
  } else if (method == NOSHELL_METHOD_POSIX_SPAWN &&
             ((req->flags & POSIX_SPAWN_CANNOT) || req->nrlimits > 0 ||
              req->nredirects > 0)) {
    child->step = NOSHELL_STEP_VALIDATE;
    return ENOTSUP;
  } else if (method < NOSHELL_METHOD_AUTO || method > NOSHELL_METHOD_FORK) {
    child->step = NOSHELL_STEP_VALIDATE;
    return EINVAL;
  }
  child->method = method;

  /* Inheriting environ (envp NULL): search the PATH the child will have. */
  search = req->envp == NULL && req->search_path == NULL ? getenv("PATH")
                                                         : req->search_path;
  if (search == NULL) search = "/bin:/usr/bin";
  if (method != NOSHELL_METHOD_POSIX_SPAWN &&
      (req->flags & (NOSHELL_SET_UID | NOSHELL_SET_GID)) &&
      strchr(req->file, '/') == NULL) {
    /* access() here would ask with our credentials, not the child's: the
     * child searches after dropping them, as execvp as that user would. */
    path[0] = '\0';
    err = strlen(req->file) > NAME_MAX ? ENAMETOOLONG
                                       : (req->file[0] == '\0' ? ENOENT : 0);
  } else {
    err = noshell_resolve(req->file, search, req->cwd, path, sizeof(path));
  }
  if (err != 0) {
    child->step = NOSHELL_STEP_RESOLVE;
    return err;
  }

  err = noshell_plan_stdio(req, child, &plan);
  if (err == 0 && (req->flags & NOSHELL_SET_CGROUP)) {
    err = req->cgroup != NULL ? open_cgroup_procs(req->cgroup, &cgroup_fd) : EINVAL;
    if (err != 0) child->step = NOSHELL_STEP_CGROUP;
  }
  if (err == 0) {
    if (method == NOSHELL_METHOD_POSIX_SPAWN)
      err = spawn_posix(req, path, &plan, child);
    else
      err = noshell_spawn_clone(req, path[0] != '\0' ? path : NULL, search,
                                &plan, cgroup_fd, child, method == NOSHELL_METHOD_FORK);
  }
  close_fd(cgroup_fd);

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
