/* C reference for the benchmarks: what this machine can do without Node.
 * posix_spawn (glibc: clone(CLONE_VM|CLONE_VFORK)) + read stdout through a
 * pipe + wait4, keeping CONC children in flight with poll().
 *
 *   reference SECONDS CONC HOLD_MB program [args...]
 *
 * With REFERENCE_SPAWN=vfork in the environment it spawns with a plain
 * vfork() + dup2 + execve instead: the cheapest spawn C has (no file
 * actions, no signal reset, no child stack to map), the floor we measure
 * against besides glibc's posix_spawn.
 *
 * HOLD_MB: MiB of touched heap the parent holds while it spawns (0 for none),
 * to show what parent memory does (nothing, for vfork-style spawning).
 * Runs for about SECONDS and prints one JSON line:
 *   {"spawn":"posix_spawn"|"vfork","spawns":N,"seconds":S,"perSecond":R,"childUserMs":U,"childSysMs":Y,
 *    "selfUserMs":A,"selfSysMs":B}
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

static int use_vfork;

typedef struct {
  pid_t pid;
  int fd;
} slot_t;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double ms(struct timeval tv) {
  return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

static int start(slot_t* s, char** argv, int devnull) {
  posix_spawn_file_actions_t fa;
  int p[2];
  int err;
  if (pipe2(p, O_CLOEXEC) != 0) return errno;
  if (use_vfork) {
    pid_t pid = vfork();
    if (pid == 0) {
      /* dup2 clears FD_CLOEXEC on 0-2; the pipe's own fds close on exec. */
      if (dup2(devnull, 0) < 0 || dup2(p[1], 1) < 0 || dup2(devnull, 2) < 0) _exit(126);
      execve(argv[0], argv, environ);
      _exit(127);
    }
    err = pid < 0 ? errno : 0;
    close(p[1]);
    if (err != 0) {
      close(p[0]);
      return err;
    }
    s->pid = pid;
    s->fd = p[0];
    return 0;
  }
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, devnull, 0);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  posix_spawn_file_actions_adddup2(&fa, devnull, 2);
  err = posix_spawn(&s->pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  if (err != 0) {
    close(p[0]);
    return err;
  }
  s->fd = p[0];
  return 0;
}

int main(int argc, char** argv) {
  double seconds, t0, end;
  int conc, i, devnull, running = 0;
  long hold_mb;
  char* held = NULL;
  long spawns = 0;
  slot_t* slots;
  struct pollfd* pfds;
  struct rusage self0, self, kids;
  char buf[65536];

  if (argc < 5) {
    fprintf(stderr, "usage: reference SECONDS CONC HOLD_MB program [args...]\n");
    return 2;
  }
  use_vfork = getenv("REFERENCE_SPAWN") != NULL && strcmp(getenv("REFERENCE_SPAWN"), "vfork") == 0;
  seconds = atof(argv[1]);
  conc = atoi(argv[2]);
  hold_mb = atol(argv[3]);
  if (hold_mb > 0) {
    held = malloc((size_t) hold_mb << 20);
    if (held == NULL) return 1;
    memset(held, 1, (size_t) hold_mb << 20);
  }
  if (conc < 1) conc = 1;
  devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  slots = calloc((size_t) conc, sizeof(*slots));
  pfds = calloc((size_t) conc, sizeof(*pfds));
  if (devnull < 0 || slots == NULL || pfds == NULL) return 1;

  getrusage(RUSAGE_SELF, &self0); /* leave out filling the held memory */
  t0 = now();
  end = t0 + seconds;
  for (i = 0; i < conc; i++) {
    int err = start(&slots[i], argv + 4, devnull);
    if (err != 0) {
      fprintf(stderr, "reference: spawn %s: %s\n", argv[4], strerror(err));
      return 1;
    }
    running++;
  }
  while (running > 0) {
    for (i = 0; i < conc; i++) {
      pfds[i].fd = slots[i].pid > 0 ? slots[i].fd : -1;
      pfds[i].events = POLLIN;
    }
    if (poll(pfds, (nfds_t) conc, -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    for (i = 0; i < conc; i++) {
      ssize_t n;
      int status;
      if (slots[i].pid <= 0 || !(pfds[i].revents & (POLLIN | POLLHUP))) continue;
      n = read(slots[i].fd, buf, sizeof(buf));
      if (n > 0 || (n < 0 && errno == EINTR)) continue;
      close(slots[i].fd);
      while (waitpid(slots[i].pid, &status, 0) < 0 && errno == EINTR) {
      }
      spawns++;
      slots[i].pid = 0;
      running--;
      if (now() < end) {
        if (start(&slots[i], argv + 4, devnull) != 0) return 1;
        running++;
      }
    }
  }
  seconds = now() - t0;
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &kids);
  printf("{\"spawn\":\"%s\",\"spawns\":%ld,\"seconds\":%.4f,\"perSecond\":%.1f,"
         "\"childUserMs\":%.1f,\"childSysMs\":%.1f,"
         "\"selfUserMs\":%.1f,\"selfSysMs\":%.1f}\n",
         use_vfork ? "vfork" : "posix_spawn", spawns, seconds, spawns / seconds, ms(kids.ru_utime), ms(kids.ru_stime),
         ms(self.ru_utime) - ms(self0.ru_utime), ms(self.ru_stime) - ms(self0.ru_stime));
  free(held);
  return 0;
}
