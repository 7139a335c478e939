/* Drives the plain-C spawning core directly (no Node), for valgrind and
 * AddressSanitizer runs: every method, pipes, stdio overlap, failures.
 * Prints "N passed, M failed" and exits non-zero on failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
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
