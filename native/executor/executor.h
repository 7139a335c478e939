/* The off-thread executor (issue 11): one thread per Node environment that
 * takes buffered-exec jobs from a queue, spawns them (noshell_spawn), reads
 * their output, writes their input, enforces their timeouts, reaps them by
 * pid with wait4 and hands finished jobs back in batches. Plain C on libuv's
 * thread primitives only (no loop), so a C driver can run it under TSan.
 *
 * Ownership: the submitter fills a job (noshell_job_new), submits it and does
 * not touch it again until noshell_executor_take() hands it back finished;
 * then it reads the result and frees it (noshell_job_free). Requests about a
 * job in flight (cancel) name it by id, never by pointer.
 */
#ifndef NOSHELL_EXECUTOR_H_
#define NOSHELL_EXECUTOR_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "env-snapshot.h"
#include "output-runs.h"
#include "../core/spawn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* job->capture: which pipes are read into buffers, and how. */
enum {
  NOSHELL_CAPTURE_STDOUT = 1,
  NOSHELL_CAPTURE_STDERR = 2,
  NOSHELL_CAPTURE_TRUNCATE = 8, /* past max_buffer: drop the rest, read on */
  NOSHELL_CAPTURE_ALL = 16      /* record the order of stdout and stderr (runs) */
};

/* job->result_flags. */
enum {
  NOSHELL_JOB_OVERFLOW_STDOUT = 1, /* went past max_buffer */
  NOSHELL_JOB_OVERFLOW_STDERR = 2,
  NOSHELL_JOB_TIMED_OUT = 4,
  NOSHELL_JOB_CANCELLED = 8,       /* cancelled before it was spawned: never ran */
  NOSHELL_JOB_ABORTED = 16,        /* cancelled while running: terminated */
  NOSHELL_JOB_STATUS_KNOWN = 32,   /* status is the child's (not reaped by someone else) */
  NOSHELL_JOB_OUTPUT_CUT = 64      /* output_grace ended with a pipe still held open */
};

/* How soon a capturing job is first asked whether its child has exited
 * (with an output grace): earlier ones end their output first, the usual
 * order, and pay nothing for it. */
#define NOSHELL_EXIT_PROBE_MS 10

typedef struct noshell_job_private noshell_job_private_t;

typedef struct noshell_job {
  /* --- the request: filled by the submitter; every pointer is owned by the
   * job (malloc'd) and freed by noshell_job_free. req's pointers point into
   * these. */
  noshell_spawn_t req;
  char* own_file;
  char** own_argv;   /* NULL-terminated */
  char** own_envp;   /* NULL-terminated, or NULL */
  /* Or the inherited environment: a reference, dropped with the job. */
  noshell_env_snapshot_t* env_snapshot;
  char* own_search_path;
  char* own_cwd;
  gid_t* own_groups;
  noshell_rlimit_t* own_rlimits;
  char* own_cgroup;
  noshell_redirect_t* own_redirects; /* one block with their paths */
  /* Caller fds for NOSHELL_STDIO_FD, dup'd at submit (the caller may close
   * its own before the spawn happens); closed after the spawn. -1: none. */
  int own_fds[3];
  unsigned capture;        /* NOSHELL_CAPTURE_* */
  size_t max_buffer;       /* bytes kept per captured stream */
  char* input;             /* written to a stdin pipe, which is then closed */
  size_t input_len;
  uint64_t timeout_ms;     /* 0: none */
  int kill_signal;         /* on timeout, cancel, overflow */
  uint64_t force_kill_after_ms; /* then SIGKILL; 0: never */
  int kill_group;          /* the child leads a group: signal all of it */
  /* Once the child has exited, how long its captured pipes are still read
   * while something else (a background grandchild) holds them open; then
   * they are let go (NOSHELL_JOB_OUTPUT_CUT) and the child is reaped.
   * -1: read them to their end, however long. */
  int64_t output_grace_ms;
  uint64_t id;             /* set by noshell_executor_submit */
  void* user;              /* the submitter's */
  struct noshell_job* next; /* list link: queue, done list */

  /* --- the result: valid once the job came back from take(). */
  int err;                 /* errno of a failed spawn, else 0 */
  noshell_step_t step;
  int detail;              /* step REDIRECT: which redirection failed */
  pid_t pid;
  int status;              /* wait status, with NOSHELL_JOB_STATUS_KNOWN */
  struct rusage ru;
  uint64_t duration_ns;    /* spawn to reap */
  char* out[2];            /* captured stdout, stderr (malloc'd or NULL) */
  size_t out_len[2];
  noshell_runs_t runs;     /* with NOSHELL_CAPTURE_ALL: their order */
  unsigned result_flags;   /* NOSHELL_JOB_* */

  noshell_job_private_t* priv; /* executor thread only */
} noshell_job_t;

/* A zeroed job with no fds; NULL when out of memory. */
noshell_job_t* noshell_job_new(void);
/* Frees the job, its request, its output and any fd it still owns. */
void noshell_job_free(noshell_job_t* job);
/* Hands a captured buffer to the caller (free() it); the job forgets it. */
char* noshell_job_take_output(noshell_job_t* job, int which, size_t* len);

typedef struct noshell_executor noshell_executor_t;

typedef struct {
  /* Called on the executor thread when finished jobs are waiting (the done
   * list went from empty to not empty) or the queue has room again after
   * a submit was refused. Must be cheap and thread-safe (uv_async_send). */
  void (*notify)(void* arg);
  void* notify_arg;
  /* Children still running when the executor stops: reaped elsewhere
   * (a detached thread), never left as zombies. NULL: waited for here. */
  void (*reap_later)(pid_t pid);
  /* Jobs queued and not yet spawned before submit refuses (EAGAIN). */
  size_t queue_limit;
} noshell_executor_options_t;

/* Starts the thread (with every signal blocked). 0 or an errno value. */
int noshell_executor_start(const noshell_executor_options_t* opts,
                           noshell_executor_t** out);
/* Queues a job and gives it an id (*id: the job may be finished and freed
 * by another thread as soon as this returns, so read the id from here).
 * 0, or EAGAIN when queue_limit jobs are already waiting (the job stays the
 * caller's; the notify callback runs once there is room), or ESHUTDOWN once
 * stopping. */
int noshell_executor_submit(noshell_executor_t* ex, noshell_job_t* job, uint64_t* id);
/* Cancels the job with that id: never started if still queued (it comes
 * back with NOSHELL_JOB_CANCELLED), else terminated like a timeout
 * (NOSHELL_JOB_ABORTED). Unknown or finished ids are ignored. */
void noshell_executor_cancel(noshell_executor_t* ex, uint64_t id);
/* The finished jobs, oldest first, linked by next; NULL if none. */
noshell_job_t* noshell_executor_take(noshell_executor_t* ex);
/* Whether a refused submit is waiting for room, cleared by reading it. */
int noshell_executor_take_room(noshell_executor_t* ex);

typedef struct {
  uint64_t queued;   /* submitted, not yet spawned */
  uint64_t running;  /* spawned, not yet finished */
  uint64_t busy_ns;  /* executor thread time spent working (not waiting) */
  uint64_t spawned;  /* jobs spawned so far */
} noshell_executor_stats_t;
void noshell_executor_stats(noshell_executor_t* ex, noshell_executor_stats_t* st);

/* Runs one job to its end on the calling thread, with no executor thread:
 * spawns it, writes its input, reads its output, enforces its timeout and
 * reaps it, as the executor would (execSync). The job is finished on
 * return (read its result, then noshell_job_free); 0, or ENOMEM/EMFILE
 * when not even that could be set up (the job never ran). */
int noshell_run_sync(noshell_job_t* job);

/* Stops and joins the thread. Children still running are handed to
 * reap_later (their fds closed; nothing killed, as when Node exits with a
 * child running, unless the job asked for NOSHELL_DIE_WITH_PARENT: then
 * kill_signal goes to it, its group too); queued jobs never start. Every job not yet taken is freed. */
void noshell_executor_stop(noshell_executor_t* ex);

#ifdef __cplusplus
}
#endif

#endif /* NOSHELL_EXECUTOR_H_ */
