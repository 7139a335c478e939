/* Internal to the executor: the thread and its queues (executor.c) and one
 * job's life on that thread (executor-job.c). */
#ifndef NOSHELL_EXECUTOR_INTERNAL_H_
#define NOSHELL_EXECUTOR_INTERNAL_H_

#include <uv.h>

#include "executor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The fds the executor watches for a job, by kind. */
enum { FD_PIDFD = 0, FD_STDOUT = 1, FD_STDERR = 2, FD_STDIN = 3, FD_KINDS = 4 };

/* What an epoll registration points at: a job and which of its fds. */
typedef struct {
  noshell_job_t* job;
  int kind;
} fd_watch_t;

struct noshell_job_private {
  fd_watch_t w[FD_KINDS];
  int fd[FD_KINDS];        /* -1 when not (or no longer) watched */
  size_t cap[2];           /* allocated size of job->out[i] */
  size_t input_off;
  size_t index;            /* in the executor's active array */
  int exited;              /* a zombie now (not reaped) */
  int abandon;             /* once exited, stop waiting for output */
  int kill_group_on_exit;  /* SIGKILL what is left of the group at exit */
  int terminated;          /* kill_signal sent (timeout, cancel, overflow) */
  int finished;
  uint64_t deadline_ns;    /* timeout; 0 none */
  uint64_t force_ns;       /* SIGKILL after a terminate; 0 none */
  uint64_t poll_ns;        /* no pidfd: next status poll; 0 none */
  uint64_t probe_ns;       /* output grace: when to start watching the exit; 0 none */
  uint64_t grace_ns;       /* output grace: when to let the pipes go; 0 none */
  unsigned poll_delay_ms;
};

struct noshell_executor {
  uv_mutex_t mu;
  /* Under mu. */
  noshell_job_t* q_head;
  noshell_job_t* q_tail;
  size_t q_len;
  uint64_t* cancels;
  size_t ncancels, cancels_cap;
  noshell_job_t* d_head;
  noshell_job_t* d_tail;
  int stopping;
  int wake_pending;        /* the eventfd was written and not yet drained */
  int sleeping;            /* the thread is in (or about to enter) epoll_wait */
  int want_room;           /* a submit was refused */
  int room;                /* ... and there is room now */
  uint64_t next_id;

  noshell_executor_options_t opts;
  int batch;               /* SCHED_BATCH when idle is ours to use; children are reset */
  int in_batch;            /* the thread runs SCHED_BATCH now */
  int efd;
  int epfd;
  uv_thread_t thread;

  /* Executor thread only. */
  noshell_job_t** active;
  size_t nactive, active_cap;
  noshell_job_t* f_head;   /* finished this round, not yet published */
  noshell_job_t* f_tail;
  char scratch[64 * 1024];

  /* Read from any thread (__atomic). */
  uint64_t st_running, st_busy_ns, st_spawned, st_queued;
};

uint64_t noshell_now_ns(void);

/* executor-job.c, on the executor thread. */
void noshell_job_start(noshell_executor_t* ex, noshell_job_t* job);
void noshell_job_on_event(noshell_executor_t* ex, fd_watch_t* w, uint32_t events);
void noshell_job_terminate(noshell_executor_t* ex, noshell_job_t* job, unsigned flag);
/* Timers and status polls due at now; returns the next due time (0: none). */
uint64_t noshell_job_timers(noshell_executor_t* ex, noshell_job_t* job, uint64_t now);
/* Stopping: close its fds, hand an unreaped child to reap_later. */
void noshell_job_abandon_child(noshell_executor_t* ex, noshell_job_t* job);

/* executor.c: a job is finished (off the active list, onto the round's list). */
void noshell_executor_finished(noshell_executor_t* ex, noshell_job_t* job);
/* executor.c: joins the active list; false when out of memory. */
int noshell_executor_activate(noshell_executor_t* ex, noshell_job_t* job);

#ifdef __cplusplus
}
#endif

#endif /* NOSHELL_EXECUTOR_INTERNAL_H_ */
