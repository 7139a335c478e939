/* The executor thread and its queues. One epoll set holds, for every job in
 * flight, its output pipes, its stdin pipe while input is left and its pidfd
 * once the exit matters, plus an eventfd that wakes the thread for new jobs
 * and cancels. Finished jobs are published once per round, so one wake-up of
 * the Node thread carries every job that finished in it. */
#define _GNU_SOURCE
#include "executor.h"
#include "executor-internal.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Jobs spawned per round before the thread looks at its pipes again. */
#define SPAWNS_PER_ROUND 32

uint64_t noshell_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

noshell_job_t* noshell_job_new(void) {
  /* One allocation: the job, then its private part. */
  noshell_job_t* job = calloc(1, sizeof(noshell_job_t) + sizeof(noshell_job_private_t));
  if (job == NULL) return NULL;
  job->priv = (noshell_job_private_t*) (job + 1);
  for (int i = 0; i < 3; i++) job->own_fds[i] = -1;
  for (int i = 0; i < FD_KINDS; i++) {
    job->priv->fd[i] = -1;
    job->priv->w[i].job = job;
    job->priv->w[i].kind = i;
  }
  job->pid = -1;
  job->detail = -1;
  job->output_grace_ms = -1;
  return job;
}

static void free_list(char** list) {
  if (list == NULL) return;
  for (char** p = list; *p != NULL; p++) free(*p);
  free(list);
}

void noshell_job_free(noshell_job_t* job) {
  if (job == NULL) return;
  free(job->own_file);
  free_list(job->own_argv);
  free_list(job->own_envp);
  noshell_env_snapshot_release(job->env_snapshot);
  free(job->own_search_path);
  free(job->own_cwd);
  free(job->own_groups);
  free(job->own_rlimits);
  free(job->own_cgroup);
  free(job->own_redirects);
  free(job->input);
  for (int i = 0; i < 3; i++)
    if (job->own_fds[i] >= 0) close(job->own_fds[i]);
  for (int i = 0; i < FD_KINDS; i++)
    if (job->priv->fd[i] >= 0) close(job->priv->fd[i]);
  free(job->out[0]);
  free(job->out[1]);
  noshell_runs_free(&job->runs);
  free(job);
}

char* noshell_job_take_output(noshell_job_t* job, int which, size_t* len) {
  char* data = job->out[which];
  *len = job->out_len[which];
  job->out[which] = NULL;
  job->out_len[which] = 0;
  return data;
}

static void wake(noshell_executor_t* ex) {
  uint64_t one = 1;
  ssize_t r;
  do r = write(ex->efd, &one, sizeof(one));
  while (r < 0 && errno == EINTR);
}

int noshell_executor_submit(noshell_executor_t* ex, noshell_job_t* job, uint64_t* id) {
  int need_wake = 0;
  uv_mutex_lock(&ex->mu);
  if (ex->stopping) {
    uv_mutex_unlock(&ex->mu);
    return ESHUTDOWN;
  }
  if (ex->q_len >= ex->opts.queue_limit) {
    ex->want_room = 1;
    uv_mutex_unlock(&ex->mu);
    return EAGAIN;
  }
  job->id = *id = ++ex->next_id;
  job->next = NULL;
  if (ex->q_tail != NULL) ex->q_tail->next = job;
  else ex->q_head = job;
  ex->q_tail = job;
  ex->q_len++;
  __atomic_store_n(&ex->st_queued, ex->q_len, __ATOMIC_RELAXED);
  /* Awake, the thread looks at the queue before it sleeps again (see
   * prepare_sleep): no write, and no chance for the woken thread to preempt
   * this one in the middle of the call. */
  if (ex->sleeping && !ex->wake_pending) need_wake = ex->wake_pending = 1;
  uv_mutex_unlock(&ex->mu);
  if (need_wake) wake(ex);
  return 0;
}

/* Under mu: appends a list to the done list; whether it was empty. */
static int publish_locked(noshell_executor_t* ex, noshell_job_t* head, noshell_job_t* tail) {
  int was_empty = ex->d_head == NULL;
  if (ex->d_tail != NULL) ex->d_tail->next = head;
  else ex->d_head = head;
  ex->d_tail = tail;
  return was_empty;
}

void noshell_executor_cancel(noshell_executor_t* ex, uint64_t id) {
  int notify = 0, need_wake = 0;
  uv_mutex_lock(&ex->mu);
  /* Still queued: it never starts, and comes back at once. */
  noshell_job_t* prev = NULL;
  for (noshell_job_t* j = ex->q_head; j != NULL; prev = j, j = j->next) {
    if (j->id != id) continue;
    if (prev != NULL) prev->next = j->next;
    else ex->q_head = j->next;
    if (ex->q_tail == j) ex->q_tail = prev;
    ex->q_len--;
    __atomic_store_n(&ex->st_queued, ex->q_len, __ATOMIC_RELAXED);
    j->next = NULL;
    j->result_flags |= NOSHELL_JOB_CANCELLED;
    notify = publish_locked(ex, j, j);
    uv_mutex_unlock(&ex->mu);
    if (notify) ex->opts.notify(ex->opts.notify_arg);
    return;
  }
  if (!ex->stopping) {
    if (ex->ncancels == ex->cancels_cap) {
      size_t cap = ex->cancels_cap ? ex->cancels_cap * 2 : 16;
      uint64_t* c = realloc(ex->cancels, cap * sizeof(*c));
      if (c != NULL) {
        ex->cancels = c;
        ex->cancels_cap = cap;
      }
    }
    /* Out of memory: the cancel is lost, the job's own timeout still holds. */
    if (ex->ncancels < ex->cancels_cap) {
      ex->cancels[ex->ncancels++] = id;
      if (ex->sleeping && !ex->wake_pending) need_wake = ex->wake_pending = 1;
    }
  }
  uv_mutex_unlock(&ex->mu);
  if (need_wake) wake(ex);
}

noshell_job_t* noshell_executor_take(noshell_executor_t* ex) {
  uv_mutex_lock(&ex->mu);
  noshell_job_t* head = ex->d_head;
  ex->d_head = ex->d_tail = NULL;
  uv_mutex_unlock(&ex->mu);
  return head;
}

int noshell_executor_take_room(noshell_executor_t* ex) {
  uv_mutex_lock(&ex->mu);
  int room = ex->room;
  ex->room = 0;
  uv_mutex_unlock(&ex->mu);
  return room;
}

void noshell_executor_stats(noshell_executor_t* ex, noshell_executor_stats_t* st) {
  st->queued = __atomic_load_n(&ex->st_queued, __ATOMIC_RELAXED);
  st->running = __atomic_load_n(&ex->st_running, __ATOMIC_RELAXED);
  st->busy_ns = __atomic_load_n(&ex->st_busy_ns, __ATOMIC_RELAXED);
  st->spawned = __atomic_load_n(&ex->st_spawned, __ATOMIC_RELAXED);
}

int noshell_executor_activate(noshell_executor_t* ex, noshell_job_t* job) {
  if (ex->nactive == ex->active_cap) {
    size_t cap = ex->active_cap ? ex->active_cap * 2 : 64;
    noshell_job_t** a = realloc(ex->active, cap * sizeof(*a));
    if (a == NULL) return 0;
    ex->active = a;
    ex->active_cap = cap;
  }
  job->priv->index = ex->nactive;
  ex->active[ex->nactive++] = job;
  __atomic_store_n(&ex->st_running, ex->nactive, __ATOMIC_RELAXED);
  __atomic_add_fetch(&ex->st_spawned, 1, __ATOMIC_RELAXED);
  return 1;
}

void noshell_executor_finished(noshell_executor_t* ex, noshell_job_t* job) {
  noshell_job_private_t* p = job->priv;
  p->finished = 1;
  /* Swap-remove from the active list (spawn failures never joined it). */
  size_t i = p->index;
  if (i < ex->nactive && ex->active[i] == job) {
    ex->active[i] = ex->active[--ex->nactive];
    ex->active[i]->priv->index = i;
    __atomic_store_n(&ex->st_running, ex->nactive, __ATOMIC_RELAXED);
  }
  job->next = NULL;
  if (ex->f_tail != NULL) ex->f_tail->next = job;
  else ex->f_head = job;
  ex->f_tail = job;
}

/* Takes up to SPAWNS_PER_ROUND queued jobs and the cancels; 1 when stopping. */
static int take_requests(noshell_executor_t* ex, noshell_job_t** batch,
                         uint64_t** cancels, size_t* ncancels, int* more) {
  uv_mutex_lock(&ex->mu);
  int stopping = ex->stopping;
  ex->wake_pending = 0;
  ex->sleeping = 0;
  noshell_job_t* head = ex->q_head;
  noshell_job_t* last = NULL;
  size_t n = 0;
  for (noshell_job_t* j = head; j != NULL && n < SPAWNS_PER_ROUND; j = j->next, n++) last = j;
  if (last != NULL) {
    ex->q_head = last->next;
    if (ex->q_head == NULL) ex->q_tail = NULL;
    last->next = NULL;
    ex->q_len -= n;
    __atomic_store_n(&ex->st_queued, ex->q_len, __ATOMIC_RELAXED);
  }
  *batch = last != NULL ? head : NULL;
  *more = ex->q_head != NULL;
  *cancels = ex->cancels;
  *ncancels = ex->ncancels;
  ex->cancels = NULL;
  ex->ncancels = ex->cancels_cap = 0;
  int room = 0;
  if (ex->want_room && ex->q_len <= ex->opts.queue_limit / 2) {
    ex->want_room = 0;
    ex->room = room = 1;
  }
  uv_mutex_unlock(&ex->mu);
  if (room) ex->opts.notify(ex->opts.notify_arg);
  return stopping;
}

static void publish(noshell_executor_t* ex) {
  if (ex->f_head == NULL) return;
  uv_mutex_lock(&ex->mu);
  int notify = publish_locked(ex, ex->f_head, ex->f_tail);
  uv_mutex_unlock(&ex->mu);
  ex->f_head = ex->f_tail = NULL;
  if (notify) ex->opts.notify(ex->opts.notify_arg);
}

static void apply_cancels(noshell_executor_t* ex, uint64_t* ids, size_t n) {
  for (size_t k = 0; k < n; k++)
    for (size_t i = 0; i < ex->nactive; i++)
      if (ex->active[i]->id == ids[k]) {
        noshell_job_terminate(ex, ex->active[i], NOSHELL_JOB_ABORTED);
        break;
      }
  free(ids);
}

/* epoll_wait's timeout: the nearest timer, 0 when jobs wait in the queue. */
static int next_timeout(noshell_executor_t* ex, int more, uint64_t now) {
  if (more) return 0;
  uint64_t next = 0;
  for (size_t i = 0; i < ex->nactive;) {
    noshell_job_t* job = ex->active[i];
    uint64_t due = noshell_job_timers(ex, job, now);
    /* A timer may have finished the job: it left the list, i now names another. */
    if (i < ex->nactive && ex->active[i] == job) {
      if (due != 0 && (next == 0 || due < next)) next = due;
      i++;
    }
  }
  if (next == 0) return -1;
  uint64_t ms = next > now ? (next - now + 999999) / 1000000 : 0;
  return ms > 60000 ? 60000 : (int) ms;
}

/* Asleep in epoll_wait, SCHED_BATCH; awake, SCHED_OTHER. A batch task
 * that is woken does not preempt the task running on the CPU it lands on:
 * woken as SCHED_OTHER by a submit, this thread often took the submitting
 * thread's CPU at once, in the middle of its eventfd write, and held it
 * through a spawn (measured, concurrency 16, two executor threads: 1.6 % of
 * the wake-ups took 32 us to 2 ms, the call's p99 ~190 us; batch while
 * asleep: 0.1 %, p99 ~100 us, same throughput). Awake it must not stay a
 * batch task: it then waited behind the children for its slices (~20 %
 * fewer execs/s at concurrency 16). Two syscalls per wake-up that found
 * work, none while it does not sleep. Only over a SCHED_OTHER creator (a
 * real-time or idle one keeps its policy); the children are put back to
 * SCHED_OTHER whatever this thread runs (NOSHELL_RESET_SCHED). */
static void set_idle_policy(noshell_executor_t* ex, int idle) {
  if (!ex->batch || idle == ex->in_batch) return;
  struct sched_param sp;
  memset(&sp, 0, sizeof(sp));
  if (syscall(SYS_sched_setscheduler, 0, idle ? SCHED_BATCH : SCHED_OTHER, &sp) == 0)
    ex->in_batch = idle;
}

/* Last look before epoll_wait, under mu: with requests waiting it does not
 * sleep (timeout 0); else it says it sleeps, and from here on a submit or a
 * cancel writes the eventfd, which epoll_wait then sees. */
static int prepare_sleep(noshell_executor_t* ex, int timeout) {
  if (timeout == 0) return 0;
  uv_mutex_lock(&ex->mu);
  if (ex->q_head != NULL || ex->ncancels > 0 || ex->stopping) timeout = 0;
  else ex->sleeping = 1;
  uv_mutex_unlock(&ex->mu);
  return timeout;
}

static void run(void* arg) {
  noshell_executor_t* ex = arg;
  /* Its name in top -H, ps -L and perf: the threads are easy to tell apart. */
  prctl(PR_SET_NAME, "noshell-exec", 0, 0, 0);
  struct epoll_event evs[64];
  int more = 0;
  uint64_t t0 = noshell_now_ns();
  for (;;) {
    uint64_t now = noshell_now_ns();
    int timeout = next_timeout(ex, more, now);
    publish(ex);
    /* Busy time: everything but the wait. */
    __atomic_add_fetch(&ex->st_busy_ns, noshell_now_ns() - t0, __ATOMIC_RELAXED);
    timeout = prepare_sleep(ex, timeout);
    if (timeout != 0) set_idle_policy(ex, 1);
    int n = epoll_wait(ex->epfd, evs, 64, timeout);
    /* Work to do (events, or it did not sleep): SCHED_OTHER. A bare timer
     * expiry (a timeout to enforce) is handled as it is. */
    set_idle_policy(ex, n == 0 && timeout != 0);
    t0 = noshell_now_ns();
    for (int i = 0; i < n; i++) {
      if (evs[i].data.ptr == NULL) {
        uint64_t v;
        while (read(ex->efd, &v, sizeof(v)) < 0 && errno == EINTR) {
        }
      } else {
        noshell_job_on_event(ex, evs[i].data.ptr, evs[i].events);
      }
    }
    noshell_job_t* batch;
    uint64_t* cancels;
    size_t ncancels;
    if (take_requests(ex, &batch, &cancels, &ncancels, &more)) {
      free(cancels);
      /* Never started: back to whoever stops us, freed there. */
      while (batch != NULL) {
        noshell_job_t* next = batch->next;
        noshell_job_free(batch);
        batch = next;
      }
      break;
    }
    while (batch != NULL) {
      noshell_job_t* next = batch->next;
      batch->next = NULL;
      noshell_job_start(ex, batch);
      batch = next;
    }
    apply_cancels(ex, cancels, ncancels);
  }
  publish(ex);
  for (size_t i = 0; i < ex->nactive; i++) noshell_job_abandon_child(ex, ex->active[i]);
}

int noshell_run_sync(noshell_job_t* job) {
  /* An executor with no thread, no queue and no eventfd: the job's own
   * epoll set and timers, run here until the job is finished. */
  noshell_executor_t* ex = calloc(1, sizeof(*ex));
  struct epoll_event evs[8];
  if (ex == NULL) return ENOMEM;
  ex->efd = -1;
  ex->epfd = epoll_create1(EPOLL_CLOEXEC);
  if (ex->epfd < 0) {
    int err = errno;
    free(ex);
    return err;
  }
  job->id = 1;
  noshell_job_start(ex, job);
  while (ex->f_head == NULL) {
    int timeout = next_timeout(ex, 0, noshell_now_ns());
    if (ex->f_head != NULL) break; /* a timer finished it */
    int n = epoll_wait(ex->epfd, evs, 8, timeout);
    for (int i = 0; i < n; i++) noshell_job_on_event(ex, evs[i].data.ptr, evs[i].events);
    /* n < 0: EINTR (a signal for this thread); anything else cannot be
     * waited out, but the timers still run: loop on. */
  }
  close(ex->epfd);
  free(ex->active);
  free(ex);
  return 0;
}

int noshell_executor_start(const noshell_executor_options_t* opts,
                           noshell_executor_t** out) {
  noshell_executor_t* ex = calloc(1, sizeof(*ex));
  if (ex == NULL) return ENOMEM;
  ex->opts = *opts;
  if (ex->opts.queue_limit == 0) ex->opts.queue_limit = 1024;
  ex->batch = syscall(SYS_sched_getscheduler, 0) == SCHED_OTHER;
  ex->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  ex->epfd = epoll_create1(EPOLL_CLOEXEC);
  int err = 0;
  struct epoll_event ev = {.events = EPOLLIN, .data = {.ptr = NULL}};
  if (ex->efd < 0 || ex->epfd < 0 || epoll_ctl(ex->epfd, EPOLL_CTL_ADD, ex->efd, &ev) != 0)
    err = errno;
  if (err == 0) err = -uv_mutex_init(&ex->mu);
  if (err != 0) {
    if (ex->efd >= 0) close(ex->efd);
    if (ex->epfd >= 0) close(ex->epfd);
    free(ex);
    return err;
  }
  /* The thread inherits the mask it is created with: every signal blocked
   * but SIGCHLD, so process-directed ones (SIGINT, SIGTERM, ...) go to
   * Node's threads. SIGCHLD is left open because this thread is the parent
   * of its children: the kernel drops a child's SIGCHLD at its exit only
   * when the parent thread does not block it and nobody handles it (Node's
   * default). Blocked here, it was queued for the process and woke the
   * event-loop thread once per exit, only to be thrown away there. With a
   * handler installed (child_process's, or process.on('SIGCHLD')), it may
   * now run on this thread: every wait here handles EINTR. A creator that
   * blocks SIGCHLD itself (a host reading it with signalfd or sigwait)
   * keeps it blocked here too, or this thread would take and drop the
   * SIGCHLDs of the host's own children. The children get an empty mask
   * (spawn.c, child.c), and every signal is blocked around the clone
   * (child.c). Raw syscall: pthread_sigmask is GLIBC_2.32. */
  sigset_t all, old;
  memset(&old, 0, sizeof(old));
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, NULL, &old, _NSIG / 8);
  memset(&all, 0xff, sizeof(all));
  if (!sigismember(&old, SIGCHLD)) sigdelset(&all, SIGCHLD);
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, _NSIG / 8);
  /* Its own stack size, not RLIMIT_STACK's (libuv's default): a spawn here
   * carves the child's 64 KiB stack out of its frame (child.c), one ~73 KiB
   * step down that a small limit's guard page would not catch. */
  uv_thread_options_t thread_opts;
  thread_opts.flags = UV_THREAD_HAS_STACK_SIZE;
  thread_opts.stack_size = 1024 * 1024;
  err = -uv_thread_create_ex(&ex->thread, &thread_opts, run, ex);
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
  if (err != 0) {
    uv_mutex_destroy(&ex->mu);
    close(ex->efd);
    close(ex->epfd);
    free(ex);
    return err;
  }
  *out = ex;
  return 0;
}

void noshell_executor_stop(noshell_executor_t* ex) {
  uv_mutex_lock(&ex->mu);
  ex->stopping = 1;
  uv_mutex_unlock(&ex->mu);
  wake(ex);
  uv_thread_join(&ex->thread);
  for (size_t i = 0; i < ex->nactive; i++) noshell_job_free(ex->active[i]);
  noshell_job_t* lists[2] = {ex->q_head, ex->d_head};
  for (int k = 0; k < 2; k++)
    for (noshell_job_t* j = lists[k]; j != NULL;) {
      noshell_job_t* next = j->next;
      noshell_job_free(j);
      j = next;
    }
  free(ex->active);
  free(ex->cancels);
  uv_mutex_destroy(&ex->mu);
  close(ex->efd);
  close(ex->epfd);
  free(ex);
}
