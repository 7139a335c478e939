/* Drives the plain-C spawning core directly (no Node), for valgrind and
 * AddressSanitizer runs: every method, pipes, stdio overlap, failures.
 * Prints "N passed, M failed" and exits non-zero on failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../native/core/spawn.h"

#include "check.h"

static int count_fds(void) {
  int n = 0, fd;
  for (fd = 0; fd < 1024; fd++)
    if (fcntl(fd, F_GETFD) >= 0) n++;
  return n;
}

static size_t read_all(int fd, char* buf, size_t len) {
  size_t got = 0;
  ssize_t n;
  while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    got += (size_t) n;
  }
  buf[got] = '\0';
  return got;
}

static int wait_status(pid_t pid) {
  int status = -1;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

static void init(noshell_spawn_t* req, noshell_method_t method, char** argv) {
  memset(req, 0, sizeof(*req));
  req->file = argv[0];
  req->argv = argv;
  req->method = method;
  req->flags = NOSHELL_NEW_PGROUP;
  req->stdio[0].kind = NOSHELL_STDIO_IGNORE;
  req->stdio[1].kind = NOSHELL_STDIO_PIPE;
  req->stdio[2].kind = NOSHELL_STDIO_STDOUT;
}

/* glibc's own signals 32 and 33 left ignored by whoever started us (glibc's
 * posix_spawn without SETSIGDEF does that) and SIGPIPE ignored as Node has
 * it: the child must see every disposition back to SIG_DFL, those too. */
/* Where the child reads its own status: another procfs mount when the test
 * hides or fakes the one at /proc (--signals). */
static char* status_path = "/proc/self/status";

static void test_signals_reset(noshell_method_t method) {
  char* argv[] = {"/bin/grep", "^SigIgn", status_path, NULL};
  static const unsigned long ign[8] = {(unsigned long) SIG_IGN};
  noshell_spawn_t req;
  noshell_child_t child;
  char buf[256];
  int sig, err;
  for (sig = 32; sig <= 33; sig++) syscall(SYS_rt_sigaction, sig, ign, NULL, 8);
  signal(SIGPIPE, SIG_IGN);
  init(&req, method, argv);
  err = noshell_spawn(&req, &child);
  CHECK(err == 0, "method %d: spawn grep: %s", method, strerror(err));
  if (err == 0) {
    read_all(child.fds[1], buf, sizeof(buf));
    close(child.fds[1]);
    CHECK(wait_status(child.pid) == 0, "method %d: grep status", method);
    CHECK(strcmp(buf, "SigIgn:\t0000000000000000\n") == 0, "method %d: child has %s", method, buf);
  }
  signal(SIGPIPE, SIG_DFL);
  for (sig = 32; sig <= 33; sig++) syscall(SYS_rt_sigaction, sig, (const unsigned long[8]){0}, NULL, 8);
}

static void test_method(noshell_method_t method, int can_see_errors) {
  char* echo[] = {"sh", "-c", "echo out; echo err >&2; ls /proc/self/fd | wc -l; exit 7", NULL};
  char* missing[] = {"/nonexistent/prog", NULL};
  char* pwd[] = {"pwd", NULL};
  char buf[4096];
  noshell_spawn_t req;
  noshell_child_t child;
  int err, status;

  init(&req, method, echo);
  req.search_path = "/usr/bin:/bin";
  err = noshell_spawn(&req, &child);
  CHECK(err == 0, "method %d: spawn sh: %s", method, strerror(err));
  if (err == 0) {
    CHECK(child.fds[0] == -1 && child.fds[2] == -1 && child.fds[1] >= 3, "fds");
    read_all(child.fds[1], buf, sizeof(buf));
    close(child.fds[1]);
    status = wait_status(child.pid);
    /* 4 = fds 0, 1, 2 and the one ls opened for the listing. */
    CHECK(strcmp(buf, "out\nerr\n4\n") == 0, "method %d: output %s", method, buf);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7, "status %x", status);
  }

  init(&req, method, pwd);
  req.search_path = "/bin";
  req.cwd = "/tmp";
  err = noshell_spawn(&req, &child);
  CHECK(err == 0, "spawn pwd: %s", strerror(err));
  if (err == 0) {
    read_all(child.fds[1], buf, sizeof(buf));
    close(child.fds[1]);
    wait_status(child.pid);
    CHECK(strcmp(buf, "/tmp\n") == 0, "cwd: %s", buf);
  }

  if (can_see_errors) {
    init(&req, method, missing);
    err = noshell_spawn(&req, &child);
    CHECK(err == ENOENT && child.pid == -1 && child.fds[1] == -1, "ENOENT: %d", err);

    init(&req, method, pwd);
    req.search_path = "/bin";
    req.cwd = "/nonexistent";
    err = noshell_spawn(&req, &child);
    CHECK(err == ENOENT && child.step == NOSHELL_STEP_CHDIR, "chdir: %d step %d", err, child.step);
  }

  /* stdout onto the caller's fd 0 slot: the overlap path. */
  {
    int p[2];
    char* cat[] = {"/bin/cat", NULL};
    if (pipe2(p, O_CLOEXEC) == 0) {
      init(&req, method, cat);
      req.stdio[0].kind = NOSHELL_STDIO_PIPE;
      req.stdio[1].kind = NOSHELL_STDIO_FD;
      req.stdio[1].fd = p[1];
      req.stdio[2].kind = NOSHELL_STDIO_IGNORE;
      err = noshell_spawn(&req, &child);
      close(p[1]);
      CHECK(err == 0, "cat: %s", strerror(err));
      if (err == 0) {
        CHECK(write(child.fds[0], "piped", 5) == 5, "write");
        close(child.fds[0]);
        read_all(p[0], buf, sizeof(buf));
        wait_status(child.pid);
        CHECK(strcmp(buf, "piped") == 0, "cat output %s", buf);
      }
      close(p[0]);
    }
  }

  init(&req, method, pwd);
  req.search_path = "/bin";
  req.stdio[1].kind = NOSHELL_STDIO_FD;
  req.stdio[1].fd = 999;
  err = noshell_spawn(&req, &child);
  CHECK(err == EBADF && child.step == NOSHELL_STEP_STDIO, "EBADF: %d", err);
}

/* uid/gid: the PATH search happens in the child, after the credentials
 * change, and the close_range fallback lists /proc/self/fd. */
static void test_credentials(noshell_method_t method, int check_exec_errors) {
  noshell_spawn_t req;
  noshell_child_t child;
  char* argv[] = {(char*) "true", NULL};
  char* missing[] = {(char*) "no-such-program-here", NULL};
  int err;
  init(&req, method, argv);
  req.search_path = "/nonexistent:/bin";
  req.flags = NOSHELL_SET_UID | NOSHELL_SET_GID;
  req.uid = 65534;
  req.gid = 65534;
  req.stdio[0].kind = req.stdio[1].kind = req.stdio[2].kind = NOSHELL_STDIO_IGNORE;
  err = noshell_spawn(&req, &child);
  CHECK(err == 0, "setuid spawn (method %d): %d step %d", method, err, child.step);
  if (err == 0) CHECK(wait_status(child.pid) == 0, "true as nobody");
  if (!check_exec_errors) return;
  req.file = missing[0];
  req.argv = missing;
  err = noshell_spawn(&req, &child);
  CHECK(err == ENOENT && child.step == NOSHELL_STEP_RESOLVE,
        "missing as nobody (method %d): %d step %d", method, err, child.step);
}

/* With more supplementary groups than the child reads /proc/self/status
 * for (its text grows with them): every signal reset, one call each. */
static void test_signals_many_groups(void) {
  static gid_t many[2000];
  gid_t saved[64];
  int n = getgroups(64, saved), i;
  for (i = 0; i < 2000; i++) many[i] = (gid_t) (200000 + i);
  if (n < 0 || setgroups(2000, many) != 0) {
    CHECK(0, "setgroups(2000): %s", strerror(errno));
    return;
  }
  test_signals_reset(NOSHELL_METHOD_AUTO);
  test_signals_reset(NOSHELL_METHOD_FORK);
  CHECK(setgroups((size_t) n, saved) == 0, "groups restored");
}

/* Runs argv with req's settings, stdout+stderr piped; returns the wait
 * status (-1: spawn failed, *err says why). */
static int run_output(noshell_spawn_t* req, char* buf, size_t len, int* err) {
  noshell_child_t child;
  int status;
  buf[0] = '\0';
  *err = noshell_spawn(req, &child);
  if (*err != 0) return -1;
  read_all(child.fds[1], buf, len);
  close(child.fds[1]);
  status = wait_status(child.pid);
  return status;
}

/* The child's own /proc/self/stat: pid, pgrp and session (fields 1, 5, 6). */
static void test_session(noshell_method_t method) {
  char* cat[] = {"/bin/cat", "/proc/self/stat", NULL};
  noshell_spawn_t req;
  char buf[1024];
  int err, pid = 0, pgrp = -1, sid = -2;
  init(&req, method, cat);
  req.flags = NOSHELL_NEW_SESSION | NOSHELL_NEW_PGROUP;
  run_output(&req, buf, sizeof(buf), &err);
  CHECK(err == 0, "method %d: setsid spawn: %s", method, strerror(err));
  {
    char* close_paren = strrchr(buf, ')');
    if (close_paren != NULL) sscanf(close_paren + 2, "%*c %*d %d %d", &pgrp, &sid);
    sscanf(buf, "%d", &pid);
  }
  CHECK(pid > 0 && pgrp == pid && sid == pid, "method %d: pid %d pgrp %d sid %d", method, pid, pgrp, sid);
}

static void test_limits(noshell_method_t method, int can_see_errors) {
  char* sh[] = {"/bin/sh", "-c", "ulimit -S -n; ulimit -H -n; ulimit -S -c; nice", NULL};
  noshell_rlimit_t lim[2] = {{RLIMIT_NOFILE, 17, 19}, {RLIMIT_CORE, 0, NOSHELL_RLIM_KEEP}};
  noshell_spawn_t req;
  struct rlimit ours;
  char buf[1024], want[128];
  int err, status;
  init(&req, method, sh);
  req.rlimits = lim;
  req.nrlimits = 2;
  req.flags |= NOSHELL_SET_NICE;
  req.nice = 7;
  status = run_output(&req, buf, sizeof(buf), &err);
  CHECK(err == 0 && status == 0, "method %d: limits spawn: %s", method, strerror(err));
  CHECK(strcmp(buf, "17\n19\n0\n7\n") == 0, "method %d: limits seen %s", method, buf);

  /* Hard kept: the soft one alone changes. */
  getrlimit(RLIMIT_NOFILE, &ours);
  lim[0].soft = 33;
  lim[0].hard = NOSHELL_RLIM_KEEP;
  req.flags &= ~(unsigned) NOSHELL_SET_NICE;
  run_output(&req, buf, sizeof(buf), &err);
  if (ours.rlim_max == RLIM_INFINITY)
    snprintf(want, sizeof(want), "33\nunlimited\n0\n0\n");
  else
    snprintf(want, sizeof(want), "33\n%llu\n0\n0\n", (unsigned long long) ours.rlim_max);
  CHECK(err == 0 && strcmp(buf, want) == 0, "method %d: hard kept: %s", method, buf);

  if (can_see_errors) {
    /* soft above hard: the kernel refuses; nothing runs. */
    lim[0].soft = 20;
    lim[0].hard = 10;
    run_output(&req, buf, sizeof(buf), &err);
    CHECK(err == EINVAL, "method %d: soft > hard: %s", method, strerror(err));
    lim[0].hard = 20;
    req.flags |= NOSHELL_SET_NICE;
    req.nice = -5;
    if (geteuid() != 0) {
      run_output(&req, buf, sizeof(buf), &err);
      CHECK(err == EACCES || err == EPERM, "method %d: nice -5 unprivileged: %s", method, strerror(err));
    } else {
      /* As nobody the lower nice is still set (before the switch). */
      req.flags |= NOSHELL_SET_UID | NOSHELL_SET_GID;
      req.uid = req.gid = 65534;
      run_output(&req, buf, sizeof(buf), &err);
      CHECK(err == 0 && strstr(buf, "\n-5\n") != NULL, "method %d: nice -5 as nobody: %s %s", method,
            strerror(err), buf);
    }
  }
}

/* The creating thread ends: the child gets its death signal. */
typedef struct {
  noshell_method_t method;
  pid_t pid;
  int err;
} death_arg_t;

static void* spawn_sleeper(void* p) {
  death_arg_t* a = (death_arg_t*) p;
  char* sleep30[] = {"/bin/sleep", "30", NULL};
  noshell_spawn_t req;
  noshell_child_t child;
  init(&req, a->method, sleep30);
  req.stdio[1].kind = req.stdio[2].kind = NOSHELL_STDIO_IGNORE;
  req.flags |= NOSHELL_DIE_WITH_PARENT | NOSHELL_SET_UID | NOSHELL_SET_GID;
  /* As another user: the switch clears the death signal, which must be set after it. */
  req.uid = req.gid = geteuid() == 0 ? 65534 : geteuid();
  if (geteuid() != 0) req.flags &= ~(unsigned) (NOSHELL_SET_UID | NOSHELL_SET_GID);
  req.death_signal = SIGKILL;
  a->err = noshell_spawn(&req, &child);
  a->pid = child.pid;
  return NULL;
}

static void test_death_signal(noshell_method_t method) {
  death_arg_t a = {method, -1, 0};
  pthread_t t;
  int status = -1, i;
  pid_t r = 0;
  CHECK(pthread_create(&t, NULL, spawn_sleeper, &a) == 0, "thread");
  pthread_join(t, NULL);
  CHECK(a.err == 0, "method %d: spawn: %s", method, strerror(a.err));
  if (a.err != 0) return;
  for (i = 0; i < 500 && r == 0; i++) {
    r = waitpid(a.pid, &status, WNOHANG);
    if (r == 0) usleep(10000);
  }
  if (r == 0) {
    kill(a.pid, SIGKILL);
    wait_status(a.pid);
  }
  CHECK(r == a.pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
        "method %d: child of an ended thread: r %d status %x", method, (int) r, status);
}

/* A cgroup v2 directory made for the test (root, cgroup2 mounted at
 * /sys/fs/cgroup or its unified/ of a hybrid layout), else only the errors. */
static void test_cgroup(noshell_method_t method, int can_see_errors) {
  static const char* const roots[] = {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"};
  char* cat[] = {"/bin/cat", "/proc/self/cgroup", NULL};
  noshell_spawn_t req;
  char dir[256], buf[4096], want[300];
  int err, status;
  size_t i;
  init(&req, method, cat);
  req.flags |= NOSHELL_SET_CGROUP;
  if (can_see_errors) {
    req.cgroup = "/tmp";
    run_output(&req, buf, sizeof(buf), &err);
    CHECK(err == ENOTSUP, "method %d: not a cgroup: %s", method, strerror(err));
    req.cgroup = "/nonexistent/cgroup";
    run_output(&req, buf, sizeof(buf), &err);
    CHECK(err == ENOENT, "method %d: no such cgroup: %s", method, strerror(err));
  }
  if (geteuid() != 0) return;
  for (i = 0; i < 2; i++) {
    snprintf(dir, sizeof(dir), "%s/noshell-core-%d", roots[i], (int) getpid());
    if (mkdir(dir, 0755) == 0) break;
  }
  if (i == 2) {
    fprintf(stderr, "skipped: no writable cgroup v2 here (%s)\n", strerror(errno));
    return;
  }
  req.cgroup = dir;
  status = run_output(&req, buf, sizeof(buf), &err);
  snprintf(want, sizeof(want), "0::/noshell-core-%d\n", (int) getpid());
  CHECK(err == 0 && status == 0 && strstr(buf, want) != NULL, "method %d: cgroup: %s %s", method,
        strerror(err), buf);
  CHECK(rmdir(dir) == 0, "rmdir %s: %s", dir, strerror(errno));
}

/* Redirections in order after the pipes, files opened as the child's user
 * relative to its cwd; a failing one names itself; a second child joins the
 * first one's group. */
static void test_redirects(noshell_method_t method, int can_see_errors) {
  char dir[] = "/tmp/noshell-redir-XXXXXX";
  char* sh[] = {"/bin/sh", "-c", "echo out; echo err >&2; echo three >&3; cat", NULL};
  char* idp[] = {"/bin/sh", "-c", "ps -o pgid= -p $$", NULL};
  char buf[256], path[512], want[64];
  noshell_redirect_t r[5];
  noshell_spawn_t req;
  noshell_child_t child;
  struct stat st;
  int err, status, fd;
  mode_t old = umask(027);
  if (mkdtemp(dir) == NULL) return;
  /* 3>f3 <in 2>&1 1>>out (order: 2 gets the pipe, then 1 goes to the file) */
  snprintf(path, sizeof(path), "%s/in", dir);
  fd = open(path, O_WRONLY | O_CREAT, 0644);
  CHECK(fd >= 0 && fchmod(fd, 0644) == 0 && write(fd, "input\n", 6) == 6, "write in");
  close(fd);
  memset(r, 0, sizeof(r));
  r[0].fd = 3; r[0].kind = NOSHELL_REDIRECT_OPEN; r[0].oflags = O_WRONLY | O_CREAT | O_TRUNC; r[0].path = "f3";
  r[1].fd = 0; r[1].kind = NOSHELL_REDIRECT_OPEN; r[1].oflags = O_RDONLY; r[1].path = "in";
  r[2].fd = 2; r[2].kind = NOSHELL_REDIRECT_DUP; r[2].src = 1;
  r[3].fd = 1; r[3].kind = NOSHELL_REDIRECT_OPEN; r[3].oflags = O_WRONLY | O_CREAT | O_APPEND; r[3].path = "out";
  init(&req, method, sh);
  req.cwd = dir;
  req.redirects = r;
  req.nredirects = 4;
  if (geteuid() == 0) {
    req.flags |= NOSHELL_SET_UID | NOSHELL_SET_GID;
    req.uid = req.gid = 65534;
    CHECK(chown(dir, 65534, 65534) == 0, "chown");
  }
  status = run_output(&req, buf, sizeof(buf), &err);
  CHECK(err == 0 && status == 0 && strcmp(buf, "err\n") == 0, "method %d: redirects: %s [%s]", method,
        strerror(err), buf);
  snprintf(path, sizeof(path), "%s/out", dir);
  fd = open(path, O_RDONLY);
  CHECK(fd >= 0 && read_all(fd, buf, sizeof(buf)) > 0 && strcmp(buf, "out\ninput\n") == 0, "out: %s", buf);
  if (fd >= 0) close(fd);
  CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640 &&
            (geteuid() != 0 || st.st_uid == 65534), "out mode %o uid %d", st.st_mode & 0777, (int) st.st_uid);
  unlink(path);
  snprintf(path, sizeof(path), "%s/f3", dir);
  CHECK(stat(path, &st) == 0 && st.st_size == 6, "f3");
  unlink(path);
  if (can_see_errors) {
    /* 2>&9: nothing open there; the redirection at index 1 fails. */
    r[0].fd = 1; r[0].kind = NOSHELL_REDIRECT_CLOSE;
    r[1].fd = 2; r[1].kind = NOSHELL_REDIRECT_DUP; r[1].src = 9;
    req.nredirects = 2;
    err = noshell_spawn(&req, &child);
    CHECK(err == EBADF && child.step == NOSHELL_STEP_REDIRECT && child.detail == 1 && child.pid == -1,
          "method %d: bad dup: %s step %d detail %d", method, strerror(err), child.step, child.detail);
    r[0].fd = 0; r[0].kind = NOSHELL_REDIRECT_OPEN; r[0].oflags = O_RDONLY; r[0].path = "missing";
    req.nredirects = 1;
    err = noshell_spawn(&req, &child);
    CHECK(err == ENOENT && child.step == NOSHELL_STEP_REDIRECT && child.detail == 0, "method %d: missing: %s",
          method, strerror(err));
  }
  if (can_see_errors) {
    /* A FIFO never blocks the spawning thread: no reader is ENXIO at once
     * (dash would wait), reading one is refused; with a reader it works. */
    char fifo[512];
    int rd;
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    CHECK(mkfifo(fifo, 0666) == 0, "mkfifo: %s", strerror(errno));
    if (geteuid() == 0) CHECK(chown(fifo, 65534, 65534) == 0, "chown fifo");
    r[0].fd = 1; r[0].kind = NOSHELL_REDIRECT_OPEN; r[0].oflags = O_WRONLY | O_CREAT | O_TRUNC; r[0].path = "fifo";
    req.nredirects = 1;
    err = noshell_spawn(&req, &child);
    CHECK(err == ENXIO && child.step == NOSHELL_STEP_REDIRECT, "method %d: fifo without reader: %s", method,
          strerror(err));
    r[0].fd = 0; r[0].oflags = O_RDONLY;
    err = noshell_spawn(&req, &child);
    CHECK(err == ENXIO && child.step == NOSHELL_STEP_REDIRECT, "method %d: reading a fifo: %s", method, strerror(err));
    rd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    r[0].fd = 1; r[0].oflags = O_WRONLY | O_CREAT | O_TRUNC;
    status = run_output(&req, buf, sizeof(buf), &err);
    CHECK(rd >= 0 && err == 0 && status == 0, "method %d: fifo with a reader: %s", method, strerror(err));
    if (rd >= 0) {
      char got[64];
      ssize_t n = read(rd, got, sizeof(got) - 1);
      CHECK(n == 4 && memcmp(got, "out\n", 4) == 0, "method %d: through the fifo: %zd", method, n);
      close(rd);
    }
    unlink(fifo);
    /* 5>&5 with 5 closed: dash runs the command. */
    r[0].fd = 5; r[0].kind = NOSHELL_REDIRECT_DUP; r[0].src = 5;
    status = run_output(&req, buf, sizeof(buf), &err);
    CHECK(err == 0, "method %d: 5>&5: %s", method, strerror(err));
  }
  snprintf(path, sizeof(path), "%s/in", dir);
  unlink(path);
  rmdir(dir);
  umask(old);

  /* Joining: the second child's group is the first one's. */
  {
    char* sleeper[] = {"/bin/sleep", "5", NULL};
    noshell_spawn_t lead;
    noshell_child_t first;
    init(&lead, method, sleeper);
    lead.stdio[1].kind = lead.stdio[2].kind = NOSHELL_STDIO_IGNORE;
    err = noshell_spawn(&lead, &first);
    CHECK(err == 0, "leader: %s", strerror(err));
    init(&req, method, idp);
    req.flags = NOSHELL_JOIN_PGROUP;
    req.pgid = first.pid;
    status = run_output(&req, buf, sizeof(buf), &err);
    snprintf(want, sizeof(want), "%d\n", (int) first.pid);
    CHECK(err == 0 && status == 0 && strcmp(buf + strspn(buf, " "), want) == 0, "method %d: joined %s want %s",
          method, buf, want);
    kill(first.pid, SIGKILL);
    wait_status(first.pid);
  }
}

static void test_posix_spawn_refuses(void) {
  char* argv[] = {"/bin/true", NULL};
  noshell_rlimit_t lim = {RLIMIT_NOFILE, 17, 19};
  noshell_redirect_t close1 = {1, NOSHELL_REDIRECT_CLOSE, 0, 0, NULL};
  unsigned refused[] = {NOSHELL_SET_NICE, NOSHELL_DIE_WITH_PARENT, NOSHELL_SET_CGROUP, 0, 0};
  noshell_spawn_t req;
  noshell_child_t child;
  int i, err;
  for (i = 0; i < 5; i++) {
    init(&req, NOSHELL_METHOD_POSIX_SPAWN, argv);
    req.flags |= refused[i];
    req.cgroup = "/tmp";
    if (i == 3) {
      req.rlimits = &lim;
      req.nrlimits = 1;
    }
    if (i == 4) {
      req.redirects = &close1;
      req.nredirects = 1;
    }
    err = noshell_spawn(&req, &child);
    CHECK(err == ENOTSUP && child.step == NOSHELL_STEP_VALIDATE, "posix_spawn refuses %d: %d", i, err);
  }
}

/* --signals STATUS: only the signal tests, the child's status read at
 * STATUS (run by native.test.ts with /proc hidden or faked). */
static int signals_only(char* path) {
  status_path = path;
  test_signals_reset(NOSHELL_METHOD_AUTO);
  test_signals_reset(NOSHELL_METHOD_VFORK);
  test_signals_reset(NOSHELL_METHOD_FORK);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--signals") == 0) return signals_only(argv[2]);
  /* The glue finds these at load; this driver links against them. */
  noshell_addclosefrom_np = (void*) posix_spawn_file_actions_addclosefrom_np;
  noshell_addchdir_np = (void*) posix_spawn_file_actions_addchdir_np;
  /* Under valgrind a CLONE_VM|CLONE_VFORK child (ours, and glibc's
   * posix_spawn) runs as a fork with its own memory, so an exec error only
   * the child sees cannot reach the parent on those paths. */
  int under_valgrind = getenv("NOSHELL_UNDER_VALGRIND") != NULL;
  int fds;
  char path[4096];
  /* The first spawn with an ignored stream opens the shared /dev/null. */
  test_method(NOSHELL_METHOD_POSIX_SPAWN, !under_valgrind);
  fds = count_fds();
  test_method(NOSHELL_METHOD_POSIX_SPAWN, !under_valgrind);
  test_method(NOSHELL_METHOD_VFORK, !under_valgrind);
  test_method(NOSHELL_METHOD_FORK, 1);
  test_method(NOSHELL_METHOD_AUTO, !under_valgrind);
  test_signals_reset(NOSHELL_METHOD_AUTO);
  test_signals_reset(NOSHELL_METHOD_VFORK);
  test_signals_reset(NOSHELL_METHOD_POSIX_SPAWN);
  test_signals_reset(NOSHELL_METHOD_FORK);
  /* Without /proc/self/status: every signal, one call each. */
  noshell_forced = NOSHELL_FALLBACK_PROC_SIGNALS;
  test_signals_reset(NOSHELL_METHOD_AUTO);
  test_signals_reset(NOSHELL_METHOD_FORK);
  noshell_forced = 0;
  if (geteuid() == 0) {
    test_signals_many_groups();
    test_credentials(NOSHELL_METHOD_VFORK, !under_valgrind);
    test_credentials(NOSHELL_METHOD_FORK, 1);
  }
  test_session(NOSHELL_METHOD_VFORK);
  test_session(NOSHELL_METHOD_FORK);
  test_session(NOSHELL_METHOD_POSIX_SPAWN);
  test_limits(NOSHELL_METHOD_VFORK, !under_valgrind);
  test_limits(NOSHELL_METHOD_FORK, 1);
  test_death_signal(NOSHELL_METHOD_VFORK);
  test_death_signal(NOSHELL_METHOD_FORK);
  test_cgroup(NOSHELL_METHOD_VFORK, !under_valgrind);
  test_cgroup(NOSHELL_METHOD_FORK, 1);
  test_redirects(NOSHELL_METHOD_VFORK, !under_valgrind);
  test_redirects(NOSHELL_METHOD_FORK, 1);
  test_posix_spawn_refuses();
  noshell_forced = NOSHELL_FALLBACK_CLOSE_RANGE;
  test_method(NOSHELL_METHOD_VFORK, !under_valgrind);
  test_method(NOSHELL_METHOD_FORK, 1);
  noshell_forced = 0;
  CHECK(noshell_resolve("sh", "/nonexistent:/bin", NULL, path, sizeof(path)) == 0 &&
            strcmp(path, "/bin/sh") == 0, "resolve: %s", path);
  CHECK(noshell_resolve("sh", "", "/bin", path, sizeof(path)) == 0 && strcmp(path, "sh") == 0,
        "resolve relative: %s", path);
  CHECK(noshell_resolve("", "/bin", NULL, path, sizeof(path)) == ENOENT, "empty");
  CHECK(count_fds() == fds, "fds leaked: %d -> %d", fds, count_fds());
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
