/* The executor on its own (no Node), for ThreadSanitizer and AddressSanitizer:
 * two submitter threads race the executor thread and the consumer (this
 * thread) through the queue, the cancel list and the done list, with a tiny
 * queue limit so refused submits and the room notice happen all the time.
 * Every job's result is checked against what it ran; at the end no fd and
 * no child is left. Prints "N passed, M failed". */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../native/executor/executor.h"

#define PER_THREAD 150
#define THREADS 2
#define TOTAL (PER_THREAD * THREADS)
#define INPUT_LEN (200 * 1024) /* more than a pipe holds */

enum kind { ECHO, TIMEOUT, CANCEL, MISSING, CAT, KINDS };

static int passed, failed;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int notified;
/* Two executors, as the addon runs: one per submitter thread here. */
static noshell_executor_t* executors[THREADS];
static __thread noshell_executor_t* ex;

#define CHECK(cond, ...)                      \
  do {                                        \
    if (cond) {                               \
      __atomic_add_fetch(&passed, 1, __ATOMIC_RELAXED);                             \
    } else {                                  \
      __atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);                             \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);           \
      fputc('\n', stderr);                    \
    }                                         \
  } while (0)

/* A SIGCHLD handler without SA_RESTART, as a host may install. The
 * executor threads leave SIGCHLD open (they are its children's parents);
 * every other thread here blocks it once they are started, so the handler
 * can only run on an executor thread and interrupt its waits there. Every
 * job must still come back right. */
static int sigchld_seen, sigchld_on_executor; /* atomics: set from the handler */

static void on_sigchld(int sig) {
  (void) sig;
  char name[16] = {0};
  __atomic_store_n(&sigchld_seen, 1, __ATOMIC_RELAXED);
  if (prctl(PR_GET_NAME, name, 0, 0, 0) == 0 && strcmp(name, "noshell-exec") == 0)
    __atomic_store_n(&sigchld_on_executor, 1, __ATOMIC_RELAXED);
}

static void notify(void* arg) {
  (void) arg;
  pthread_mutex_lock(&mu);
  notified = 1;
  pthread_cond_signal(&cond);
  pthread_mutex_unlock(&mu);
}

static void reap_later(pid_t pid) {
  kill(pid, SIGKILL);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
  }
}

/* Processes whose command line starts with these bytes (NULs included). */
static int count_cmdline(const char* want) {
  size_t len = strlen(want) + 1 + strlen(want + strlen(want) + 1);
  int n = 0;
  DIR* d = opendir("/proc");
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    char path[300], buf[64];
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t got = read(fd, buf, sizeof(buf));
    close(fd);
    if (got >= (ssize_t) len && memcmp(buf, want, len) == 0) n++;
  }
  closedir(d);
  return n;
}

static int count_fds(void) {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (readdir(d) != NULL) n++;
  closedir(d);
  return n;
}

static noshell_job_t* make_job(int tag, const char* const* argv) {
  noshell_job_t* job = noshell_job_new();
  size_t n = 0;
  while (argv[n] != NULL) n++;
  job->own_argv = calloc(n + 1, sizeof(char*));
  for (size_t i = 0; i < n; i++) job->own_argv[i] = strdup(argv[i]);
  job->own_file = strdup(argv[0]);
  job->req.file = job->own_file;
  job->req.argv = job->own_argv;
  job->req.stdio[0].kind = NOSHELL_STDIO_IGNORE;
  job->req.stdio[1].kind = NOSHELL_STDIO_PIPE;
  job->req.stdio[2].kind = NOSHELL_STDIO_PIPE;
  job->req.flags = NOSHELL_NEW_PGROUP;
#ifdef __SANITIZE_THREAD__
  /* posix_spawn and the vfork path run the child in our memory (CLONE_VM)
   * until it execs; TSan's fork bookkeeping then runs in the shared address
   * space and corrupts its view of the parent. A real fork is what it can
   * model, and the queue is what this run is about. */
  job->req.method = NOSHELL_METHOD_FORK;
#endif
  job->capture = NOSHELL_CAPTURE_STDOUT | NOSHELL_CAPTURE_STDERR;
  job->max_buffer = 1 << 20;
  job->kill_signal = SIGTERM;
  job->kill_group = 1;
  job->user = (void*) (intptr_t) tag;
  return job;
}

static uint64_t submit(noshell_job_t* job);

/* Submits one job to `ex` and waits for it to come back (nothing else in flight). */
static noshell_job_t* run_one(noshell_job_t* job) {
  noshell_job_t* done = NULL;
  submit(job);
  while (done == NULL) {
    pthread_mutex_lock(&mu);
    while (!notified) pthread_cond_wait(&cond, &mu);
    notified = 0;
    pthread_mutex_unlock(&mu);
    done = noshell_executor_take(ex);
  }
  return done;
}

static uint64_t submit(noshell_job_t* job) {
  int err;
  uint64_t id = 0;
  while ((err = noshell_executor_submit(ex, job, &id)) == EAGAIN) {
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
  }
  CHECK(err == 0, "submit: %d", err);
  return id;
}

static void* submitter(void* arg) {
  int base = (int) (intptr_t) arg;
  ex = executors[base / PER_THREAD];
  char token[32];
  /* This thread's environment cache (env-snapshot.h): echo jobs inherit
   * the environment and are found through its PATH, and the consumer drops
   * their references while this thread takes new ones. */
  noshell_env_snapshot_t* env_cache = NULL;
  for (int i = 0; i < PER_THREAD; i++) {
    int tag = base + i;
    noshell_job_t* job;
    snprintf(token, sizeof(token), "tok%d", tag);
    switch (tag % KINDS) {
      case ECHO: {
        const char* argv[] = {"echo", token, NULL};
        job = make_job(tag, argv);
        job->env_snapshot = noshell_env_snapshot_current(&env_cache);
        CHECK(job->env_snapshot != NULL && job->env_snapshot->path != NULL, "env snapshot with PATH");
        job->req.envp = job->env_snapshot->envp;
        job->req.search_path = job->env_snapshot->path;
        break;
      }
      case TIMEOUT: {
        const char* argv[] = {"/bin/sleep", "5", NULL};
        job = make_job(tag, argv);
        job->timeout_ms = 20;
        job->force_kill_after_ms = 500;
        break;
      }
      case CANCEL: {
        const char* argv[] = {"/bin/sleep", "5", NULL};
        job = make_job(tag, argv);
        break;
      }
      case MISSING: {
        const char* argv[] = {"/nonexistent/program", NULL};
        job = make_job(tag, argv);
        break;
      }
      default: {
        const char* argv[] = {"/bin/cat", NULL};
        job = make_job(tag, argv);
        job->req.stdio[0].kind = NOSHELL_STDIO_PIPE;
        job->input = malloc(INPUT_LEN);
        for (int k = 0; k < INPUT_LEN; k++) job->input[k] = (char) ('a' + (tag + k) % 26);
        job->input_len = INPUT_LEN;
        break;
      }
    }
    uint64_t id = submit(job); /* job may be gone already: only the id is ours */
    if (tag % KINDS == CANCEL) noshell_executor_cancel(ex, id);
  }
  noshell_env_snapshot_release(env_cache);
  return NULL;
}

static void check_result(noshell_job_t* job) {
  int tag = (int) (intptr_t) job->user;
  char token[40];
  snprintf(token, sizeof(token), "tok%d\n", tag);
  switch (tag % KINDS) {
    case ECHO:
      CHECK(job->err == 0 && job->out_len[0] == strlen(token) &&
                memcmp(job->out[0], token, strlen(token)) == 0,
            "echo %d: err %d, %zu bytes", tag, job->err, job->out_len[0]);
      CHECK(WIFEXITED(job->status) && WEXITSTATUS(job->status) == 0, "echo %d status", tag);
      break;
    case TIMEOUT:
      CHECK(job->result_flags & NOSHELL_JOB_TIMED_OUT, "timeout %d flags %u", tag, job->result_flags);
      CHECK(WIFSIGNALED(job->status) && WTERMSIG(job->status) == SIGTERM, "timeout %d status", tag);
      break;
    case CANCEL:
      CHECK(job->result_flags & (NOSHELL_JOB_CANCELLED | NOSHELL_JOB_ABORTED),
            "cancel %d flags %u", tag, job->result_flags);
      break;
    case MISSING:
      CHECK(job->err == ENOENT && job->pid == -1, "missing %d: err %d", tag, job->err);
      break;
    default: {
      int same = job->out_len[0] == INPUT_LEN;
      for (size_t k = 0; same && k < INPUT_LEN; k++) same = job->out[0][k] == (char) ('a' + (tag + (int) k) % 26);
      CHECK(same, "cat %d: %zu bytes back", tag, job->out_len[0]);
    }
  }
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_sigchld;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCHLD, &sa, NULL);
  /* The core keeps one /dev/null open for the process (stdio.c): open it
   * before counting. */
  {
    char* argv[] = {"/bin/true", NULL};
    noshell_spawn_t req = {.file = "/bin/true", .argv = argv, .method = NOSHELL_METHOD_FORK};
    for (int i = 0; i < 3; i++) req.stdio[i].kind = NOSHELL_STDIO_IGNORE;
    noshell_child_t child;
    if (noshell_spawn(&req, &child) == 0) waitpid(child.pid, NULL, 0);
  }
  int fds_before = count_fds();
  noshell_executor_options_t opts = {notify, NULL, reap_later, 8};
  for (int t = 0; t < THREADS; t++) CHECK(noshell_executor_start(&opts, &executors[t]) == 0, "start");
  /* From here on only the executor threads take SIGCHLD (the submitters inherit this). */
  sigset_t chld_set;
  sigemptyset(&chld_set);
  sigaddset(&chld_set, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &chld_set, NULL);
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++)
    pthread_create(&threads[t], NULL, submitter, (void*) (intptr_t) (t * PER_THREAD));
  int seen = 0;
  char got[TOTAL] = {0};
  while (seen < TOTAL) {
    pthread_mutex_lock(&mu);
    while (!notified) pthread_cond_wait(&cond, &mu);
    notified = 0;
    pthread_mutex_unlock(&mu);
    for (int t = 0; t < THREADS; t++) {
    noshell_executor_take_room(executors[t]);
    for (noshell_job_t* j = noshell_executor_take(executors[t]); j != NULL;) {
      noshell_job_t* next = j->next;
      int tag = (int) (intptr_t) j->user;
      CHECK(tag >= 0 && tag < TOTAL && !got[tag], "job %d came back twice", tag);
      if (tag >= 0 && tag < TOTAL) got[tag] = 1;
      check_result(j);
      noshell_job_free(j);
      seen++;
      j = next;
    }
    }
  }
  for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
  for (int t = 0; t < THREADS; t++) {
    noshell_executor_stats_t st;
    noshell_executor_stats(executors[t], &st);
    CHECK(st.queued == 0 && st.running == 0, "stats: %llu queued, %llu running",
          (unsigned long long) st.queued, (unsigned long long) st.running);
  }

  /* The output grace: a background grandchild holds stdout; the job ends
   * with the child's status and what was read, its output cut. */
  {
    const char* argv[] = {"/bin/sh", "-c", "sleep 6.5 & echo hi; echo err >&2", NULL};
    noshell_job_t* job = make_job(1000, argv);
    job->output_grace_ms = 50;
    ex = executors[0];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    noshell_job_t* done = run_one(job);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    CHECK(done->next == NULL && (done->result_flags & NOSHELL_JOB_OUTPUT_CUT) && WIFEXITED(done->status) &&
              WEXITSTATUS(done->status) == 0 && done->out_len[0] == 3 && memcmp(done->out[0], "hi\n", 3) == 0 &&
              done->out_len[1] == 4,
          "grace: flags %u status %x out %zu err %zu", done->result_flags, done->status, done->out_len[0], done->out_len[1]);
    CHECK(ms < 3000, "grace: %.0f ms", ms);
    noshell_job_free(done);
    /* The sleep it left is ours to stop here. */
    for (int i = 0; i < 2 && count_cmdline("sleep\0006.5") > 0; i++) system("pkill -f '^sleep 6.5$'");
  }

  /* all: the order stdout and stderr came in, and the runs on their own. */
  {
    const char* argv[] = {"/bin/sh", "-c", "echo a; sleep 0.02; echo bb >&2; sleep 0.02; echo c", NULL};
    noshell_job_t* job = make_job(1001, argv);
    job->capture |= NOSHELL_CAPTURE_ALL;
    ex = executors[0];
    noshell_job_t* done = run_one(job);
    size_t len = 0;
    char* all = noshell_runs_interleave(&done->runs, done->out[0], done->out_len[0], done->out[1], done->out_len[1], &len);
    CHECK(all != NULL && len == 7 && memcmp(all, "a\nbb\nc\n", 7) == 0, "all: %zu bytes, %zu runs", len, done->runs.n);
    free(all);
    noshell_job_free(done);
    noshell_runs_t r = {0};
    CHECK(noshell_runs_add(&r, 0, 3) == 0 && noshell_runs_add(&r, 0, 4) == 0 && noshell_runs_add(&r, 1, 2) == 0 &&
              r.n == 2 && r.v[0] == (7u << 1) && r.v[1] == ((2u << 1) | 1u), "runs merge: %zu", r.n);
    CHECK(noshell_runs_interleave(&r, "abcdefg", 7, "x", 1, &len) == NULL, "runs past the bytes are refused");
    noshell_runs_free(&r);
  }

  /* A job run to its end on this thread (execSync): output, a timeout. */
  {
    const char* echo[] = {"/bin/sh", "-c", "echo sync; echo e >&2", NULL};
    noshell_job_t* job = make_job(1002, echo);
    CHECK(noshell_run_sync(job) == 0 && job->err == 0 && WIFEXITED(job->status) && WEXITSTATUS(job->status) == 0 &&
              job->out_len[0] == 5 && memcmp(job->out[0], "sync\n", 5) == 0 && job->out_len[1] == 2,
          "sync: err %d status %x out %zu", job->err, job->status, job->out_len[0]);
    noshell_job_free(job);
    const char* slow[] = {"/bin/sh", "-c", "sleep 5 & sleep 5", NULL};
    job = make_job(1003, slow);
    job->timeout_ms = 100;
    CHECK(noshell_run_sync(job) == 0 && (job->result_flags & NOSHELL_JOB_TIMED_OUT) && WIFSIGNALED(job->status),
          "sync timeout: flags %u status %x", job->result_flags, job->status);
    noshell_job_free(job);
    const char* missing[] = {"/nonexistent/x", NULL};
    job = make_job(1004, missing);
    CHECK(noshell_run_sync(job) == 0 && job->err == ENOENT, "sync missing: err %d", job->err);
    noshell_job_free(job);
  }

  /* Stopping with children running: handed to reap_later, nothing leaks. */
  ex = executors[0];
  for (int i = 0; i < 4; i++) {
    const char* argv[] = {"/bin/sleep", "5", NULL};
    submit(make_job(i, argv));
  }
  /* ... and cleanup jobs: their groups get kill_signal as the thread stops
   * (the background sleep too), the child its death signal. */
  ex = executors[1 % THREADS];
  for (int i = 0; i < 2; i++) {
    const char* argv[] = {"/bin/sh", "-c", "sleep 7.25 & wait", NULL};
    noshell_job_t* job = make_job(100 + i, argv);
    job->req.flags |= NOSHELL_DIE_WITH_PARENT;
    job->req.death_signal = SIGKILL;
    submit(job);
  }
  struct timespec ts = {0, 50000000};
  nanosleep(&ts, NULL);
  CHECK(count_cmdline("sleep\0007.25") == 2, "cleanup jobs' sleeps: %d running", count_cmdline("sleep\0007.25"));
  for (int t = 0; t < THREADS; t++) noshell_executor_stop(executors[t]);
  for (int i = 0; i < 100 && count_cmdline("sleep\0007.25") > 0; i++) nanosleep(&ts, NULL);
  CHECK(count_cmdline("sleep\0007.25") == 0, "cleanup jobs' groups left running: %d", count_cmdline("sleep\0007.25"));
  CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "a child was left behind");
  CHECK(count_fds() == fds_before, "fds: %d before, %d after", fds_before, count_fds());
  int chld = __atomic_load_n(&sigchld_seen, __ATOMIC_RELAXED), on_ex = __atomic_load_n(&sigchld_on_executor, __ATOMIC_RELAXED);
  CHECK(chld && on_ex, "SIGCHLD handler: ran %d, on an executor thread %d", chld, on_ex);
  /* An executor started by a thread that blocks SIGCHLD (a host reading it
   * with signalfd or sigwait) keeps it blocked: it must not take and drop
   * the host's SIGCHLDs. */
  {
    noshell_executor_t* blocked_ex;
    CHECK(noshell_executor_start(&opts, &blocked_ex) == 0, "start with SIGCHLD blocked");
    const char* argv[] = {"/bin/true", NULL};
    ex = blocked_ex;
    noshell_job_free(run_one(make_job(2000, argv)));
    char path[300], line[256];
    int found = 0, chld_blocked = 0;
    DIR* d = opendir("/proc/self/task");
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
      FILE* f = fopen(path, "r");
      if (f == NULL) continue;
      int ours = fgets(line, sizeof(line), f) != NULL && strcmp(line, "noshell-exec\n") == 0;
      fclose(f);
      if (!ours) continue;
      snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
      f = fopen(path, "r");
      while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        unsigned long long blk;
        if (sscanf(line, "SigBlk: %llx", &blk) == 1) {
          found++;
          chld_blocked += (blk >> (SIGCHLD - 1)) & 1;
        }
      }
      if (f != NULL) fclose(f);
    }
    closedir(d);
    CHECK(found == 1 && chld_blocked == 1, "executor started with SIGCHLD blocked: %d found, %d block it", found, chld_blocked);
    noshell_executor_stop(blocked_ex);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
