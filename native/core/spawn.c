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
  "setpriority", "pdeathsig"
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
  else if (req->flags & NOSHELL_NEW_PGROUP) flags |= POSIX_SPAWN_SETPGROUP;
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
      (err = posix_spawnattr_setpgroup(&attr, 0)) != 0)
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

/* <dir>/cgroup.procs, opened here with our credentials (the kernel checks a
 * move against the opener's): the child writes "0" to it, moving itself
 * before anything else it does. ENOTSUP when dir is not on cgroup2 (a v1
 * hierarchy, or no cgroup at all). Never one of 0-2, which the child's
 * stdio plan may name as inherited. */
static int open_cgroup_procs(const char* dir, int* out) {
  char path[PATH_MAX];
  struct statfs sf;
  struct stat st;
  size_t len = strlen(dir);
  int fd;
  if (len == 0 || len + sizeof("/cgroup.procs") > sizeof(path)) return ENAMETOOLONG;
  memcpy(path, dir, len);
  memcpy(path + len, "/cgroup.procs", sizeof("/cgroup.procs"));
  fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    /* A missing cgroup.procs in a directory that exists: not a cgroup. */
    if (err == ENOENT && noshell_stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return ENOTSUP;
    return err;
  }
  if (fstatfs(fd, &sf) != 0 || (unsigned long) sf.f_type != CGROUP2_SUPER_MAGIC) {
    close(fd);
    return ENOTSUP;
  }
  if (fd < 3) {
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int err = errno;
    close(fd);
    if (moved < 0) return err;
    fd = moved;
  }
  *out = fd;
  return 0;
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
  plan.nclose = 0;
  plan.devnull = -1;

  if (req->file == NULL || req->argv == NULL || req->argv[0] == NULL) {
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
             ((req->flags & POSIX_SPAWN_CANNOT) || req->nrlimits > 0)) {
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
