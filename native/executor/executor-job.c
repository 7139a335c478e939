/* One job on the executor thread: spawn, write its input, read its output,
 * notice its exit, enforce its timeout, reap it. The child is reaped only
 * once it has exited *and* its captured output has ended, been given up
 * after a terminate, or outlived the output grace: until then its zombie
 * pins its pid and its process group id, so a kill(-pid) after a timeout
 * reaches the group it ran, never a reused one; once reaped, nothing is sent
 * to either. Never waitpid(-1), never a SIGCHLD handler. */
#define _GNU_SOURCE
#include "executor.h"
#include "executor-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* Reads per wake-up of one pipe, so one chatty child cannot starve the rest. */
#define READS_PER_EVENT 16
#define MAX_POLL_DELAY_MS 50

static int watch_fd(noshell_executor_t* ex, noshell_job_t* job, int kind, uint32_t events) {
  struct epoll_event ev;
  memset(&ev, 0, sizeof(ev));
  ev.events = events;
  ev.data.ptr = &job->priv->w[kind];
  return epoll_ctl(ex->epfd, EPOLL_CTL_ADD, job->priv->fd[kind], &ev) == 0 ? 0 : errno;
}

/* Removed from the set before it is closed: a forked child that has not
 * exec'd yet may still hold the pipe, and the registration would outlive
 * our fd (and the job). */
static void close_fd(noshell_executor_t* ex, noshell_job_t* job, int kind) {
  int fd = job->priv->fd[kind];
  if (fd < 0) return;
  epoll_ctl(ex->epfd, EPOLL_CTL_DEL, fd, NULL);
  close(fd);
  job->priv->fd[kind] = -1;
}

static int capturing(const noshell_job_t* job) {
  return job->priv->fd[FD_STDOUT] >= 0 || job->priv->fd[FD_STDERR] >= 0;
}

/* Sends sig the way a terminate does: the whole group (and the leader, in
 * case it left the group) or the child alone. Only while unreaped: the
 * zombie keeps the pid and the group id ours. */
static void send_signal(noshell_job_t* job, int sig) {
  if (job->pid <= 0) return;
  if (job->kill_group) kill(-job->pid, sig);
  if (!job->priv->exited) kill(job->pid, sig);
}

static void finish(noshell_executor_t* ex, noshell_job_t* job) {
  for (int k = 0; k < FD_KINDS; k++) close_fd(ex, job, k);
  noshell_executor_finished(ex, job);
}

static void maybe_finish(noshell_executor_t* ex, noshell_job_t* job);

static void let_output_go(noshell_executor_t* ex, noshell_job_t* job);

static void on_exited(noshell_executor_t* ex, noshell_job_t* job) {
  noshell_job_private_t* p = job->priv;
  p->exited = 1;
  p->poll_ns = 0;
  p->probe_ns = 0;
  close_fd(ex, job, FD_PIDFD);
  /* A timeout or abort: nothing of its group may outlive it. */
  if (p->kill_group_on_exit) kill(-job->pid, SIGKILL);
  /* Its output still open: held by someone else (a background grandchild),
   * read for the grace, then let go. */
  if (capturing(job) && !p->abandon && job->output_grace_ms >= 0) {
    if (job->output_grace_ms == 0) {
      let_output_go(ex, job);
      return;
    }
    /* The child ended on its own: its timeout no longer applies, but the
     * grace ends by then at the latest. */
    p->grace_ns = noshell_now_ns() + (uint64_t) job->output_grace_ms * 1000000u;
    if (p->deadline_ns != 0 && p->deadline_ns < p->grace_ns) p->grace_ns = p->deadline_ns;
    p->deadline_ns = 0;
  }
  maybe_finish(ex, job);
}

/* Whether the child has exited, without reaping it; ECHILD (reaped by
 * someone else: SIGCHLD ignored, a waitpid(-1) elsewhere) counts. */
static int has_exited(pid_t pid) {
  siginfo_t si;
  memset(&si, 0, sizeof(si));
  int r;
  do r = waitid(P_PID, (id_t) pid, &si, WEXITED | WNOHANG | WNOWAIT);
  while (r < 0 && errno == EINTR);
  return r < 0 ? errno == ECHILD : si.si_pid == pid;
}

static void reaped(noshell_executor_t* ex, noshell_job_t* job, pid_t r, int status);

/* Starts watching for the exit if nothing does yet. */
static void watch_exit(noshell_executor_t* ex, noshell_job_t* job) {
  noshell_job_private_t* p = job->priv;
  if (p->exited || p->fd[FD_PIDFD] >= 0 || p->poll_ns != 0) return;
  if (!capturing(job) && !p->terminated) {
    /* The usual end: output over, never terminated, so nothing will signal
     * its group and its zombie pins nothing we need. Reaped in one call if
     * it has exited (a WNOWAIT look, then wait4, was two per exec). */
    int status = 0;
    pid_t r;
    do r = wait4(job->pid, &status, WNOHANG, &job->ru);
    while (r < 0 && errno == EINTR);
    if (r != 0) {
      p->exited = 1;
      reaped(ex, job, r, status);
      return;
    }
  } else if (has_exited(job->pid)) {
    on_exited(ex, job);
    return;
  }
  int fd = (noshell_forced & NOSHELL_FALLBACK_PIDFD)
               ? -1
               : (int) syscall(SYS_pidfd_open, job->pid, 0);
  if (fd >= 0) {
    p->fd[FD_PIDFD] = fd;
    if (watch_fd(ex, job, FD_PIDFD, EPOLLIN) == 0) return;
    close(fd);
    p->fd[FD_PIDFD] = -1;
  }
  /* No pidfd (kernel < 5.3, EMFILE, ENOMEM): poll the status, backing off. */
  p->poll_delay_ms = 1;
  p->poll_ns = noshell_now_ns() + 1000000u;
}

static void maybe_finish(noshell_executor_t* ex, noshell_job_t* job) {
  noshell_job_private_t* p = job->priv;
  if (p->finished) return;
  if (!p->exited) {
    /* Output over (the usual order) or a terminate: the exit matters now. */
    if (!capturing(job) || p->terminated) watch_exit(ex, job);
    return;
  }
  if (capturing(job) && !p->abandon) return;
  int status = 0;
  pid_t r;
  do r = wait4(job->pid, &status, WNOHANG, &job->ru);
  while (r < 0 && errno == EINTR);
  if (r == 0) return; /* cannot happen once it exited; be safe */
  reaped(ex, job, r, status);
}

/* wait4 gave r (the pid, or -1: reaped by someone else, status unknown). */
static void reaped(noshell_executor_t* ex, noshell_job_t* job, pid_t r, int status) {
  if (r == job->pid) {
    job->status = status;
    job->result_flags |= NOSHELL_JOB_STATUS_KNOWN;
  }
  job->duration_ns = noshell_now_ns() - job->duration_ns;
  finish(ex, job);
}

void noshell_job_terminate(noshell_executor_t* ex, noshell_job_t* job, unsigned flag) {
  noshell_job_private_t* p = job->priv;
  job->result_flags |= flag;
  if (p->terminated || p->finished) return;
  p->terminated = 1;
  p->deadline_ns = 0;
  send_signal(job, job->kill_signal);
  p->kill_group_on_exit = job->kill_group;
  if (job->force_kill_after_ms > 0 && job->kill_signal != SIGKILL)
    p->force_ns = noshell_now_ns() + job->force_kill_after_ms * 1000000u;
  else
    p->abandon = 1; /* output still held open past the kill must not keep it */
  /* Exited already (its output held open by the rest of its group): what
   * is left of the group goes at once. */
  if (p->exited && p->kill_group_on_exit) kill(-job->pid, SIGKILL);
  maybe_finish(ex, job);
}

/* Appends n bytes to output i, keeping at most max (one more without
 * truncate: enough to know it overflowed). False when the stream ends here. */
static int append(noshell_executor_t* ex, noshell_job_t* job, int i, const char* data, size_t n) {
  noshell_job_private_t* p = job->priv;
  int truncate = (job->capture & NOSHELL_CAPTURE_TRUNCATE) != 0;
  size_t room = job->max_buffer - job->out_len[i];
  size_t keep = n <= room ? n : room;
  if (keep > 0) {
    if (p->cap[i] - job->out_len[i] < keep) {
      size_t cap = p->cap[i] ? p->cap[i] : 256;
      while (cap - job->out_len[i] < keep) cap *= 2;
      if (cap > job->max_buffer && job->max_buffer >= job->out_len[i] + keep) cap = job->max_buffer;
      char* d = realloc(job->out[i], cap);
      if (d == NULL) return 0; /* out of memory: the output ends here */
      job->out[i] = d;
      p->cap[i] = cap;
    }
    /* With `all`, the order too; no memory for it ends the output as above. */
    if ((job->capture & NOSHELL_CAPTURE_ALL) && noshell_runs_add(&job->runs, i, keep) != 0) return 0;
    memcpy(job->out[i] + job->out_len[i], data, keep);
    job->out_len[i] += keep;
  }
  if (keep == n) return 1;
  job->result_flags |= i == 0 ? NOSHELL_JOB_OVERFLOW_STDOUT : NOSHELL_JOB_OVERFLOW_STDERR;
  if (truncate) return 1; /* drop the rest, read on: the plugin finishes */
  /* exec: past maxBuffer the child is killed (like a timeout). */
  noshell_job_terminate(ex, job, 0);
  return 0;
}

/* Reads what the pipe has; 0 when the stream has ended (EOF, a read error,
 * out of memory, or past max_buffer without truncate). */
static int on_output(noshell_executor_t* ex, noshell_job_t* job, int kind) {
  int i = kind - FD_STDOUT;
  for (int k = 0; k < READS_PER_EVENT; k++) {
    ssize_t n = read(job->priv->fd[kind], ex->scratch, sizeof(ex->scratch));
    if (n > 0) {
      if (!append(ex, job, i, ex->scratch, (size_t) n)) return 0;
      /* Short read: drained; level-triggered epoll says when more comes. */
      if ((size_t) n < sizeof(ex->scratch)) return 1;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && errno == EAGAIN;
  }
  return 1;
}

static void end_output(noshell_executor_t* ex, noshell_job_t* job, int kind) {
  close_fd(ex, job, kind);
  maybe_finish(ex, job);
}

/* Reads what the pipe holds now, to EAGAIN or its end, whatever the size of
 * each read (a packet-mode pipe gives one write per read); at most
 * DRAIN_READS reads, so a writer that never stops cannot hold us. Whether
 * the stream is still open. */
#define DRAIN_READS 256
static int drain_output(noshell_executor_t* ex, noshell_job_t* job, int kind) {
  int i = kind - FD_STDOUT;
  for (int k = 0; k < DRAIN_READS; k++) {
    ssize_t n = read(job->priv->fd[kind], ex->scratch, sizeof(ex->scratch));
    if (n > 0) {
      if (!append(ex, job, i, ex->scratch, (size_t) n)) return 0;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && errno == EAGAIN;
  }
  return 1;
}

/* The grace is over: what the pipes hold now is read, then they are closed
 * and the child reaped. The writers still holding them get EPIPE. */
static void let_output_go(noshell_executor_t* ex, noshell_job_t* job) {
  noshell_job_private_t* p = job->priv;
  p->grace_ns = 0;
  for (int kind = FD_STDOUT; kind <= FD_STDERR; kind++) {
    if (p->fd[kind] < 0) continue;
    if (!drain_output(ex, job, kind)) {
      close_fd(ex, job, kind); /* ended after all (EOF) */
      continue;
    }
    job->result_flags |= NOSHELL_JOB_OUTPUT_CUT;
  }
  p->abandon = 1;
  maybe_finish(ex, job);
}

/* Writes what is left of the input; closes stdin when done or refused. */
static void on_input(noshell_executor_t* ex, noshell_job_t* job) {
  noshell_job_private_t* p = job->priv;
  while (p->input_off < job->input_len) {
    ssize_t n = write(p->fd[FD_STDIN], job->input + p->input_off, job->input_len - p->input_off);
    if (n > 0) {
      p->input_off += (size_t) n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    break; /* EPIPE: the child does not read; not an error of the exec */
  }
  close_fd(ex, job, FD_STDIN);
}

void noshell_job_on_event(noshell_executor_t* ex, fd_watch_t* w, uint32_t events) {
  noshell_job_t* job = w->job;
  noshell_job_private_t* p = job->priv;
  (void) events; /* EPOLLHUP/EPOLLERR: the read or write says what happened */
  if (p->finished || p->fd[w->kind] < 0) return; /* closed earlier this round */
  if (w->kind == FD_PIDFD)
    on_exited(ex, job);
  else if (w->kind == FD_STDIN)
    on_input(ex, job);
  else if (!on_output(ex, job, w->kind))
    end_output(ex, job, w->kind);
}

/* The child could not be watched: it must not run on unseen. Killed (its
 * group too) and reaped here, its fds closed; the job reports a failed
 * start at the 'capture' step. */
static void fail_start(noshell_executor_t* ex, noshell_job_t* job, int err) {
  if (job->kill_group) kill(-job->pid, SIGKILL);
  kill(job->pid, SIGKILL);
  while (waitpid(job->pid, NULL, 0) < 0 && errno == EINTR) {
  }
  for (int k = 0; k < FD_KINDS; k++) close_fd(ex, job, k);
  job->err = err;
  job->step = NOSHELL_STEP_CAPTURE;
  job->pid = -1;
  noshell_executor_finished(ex, job);
}

/* Our end of a pipe noshell_spawn just made: no status flag is set (its
 * access mode F_SETFL leaves alone), so no F_GETFL first. */
static int set_nonblocking(int fd) {
  return fcntl(fd, F_SETFL, O_NONBLOCK) == 0 ? 0 : errno;
}

void noshell_job_start(noshell_executor_t* ex, noshell_job_t* job) {
  noshell_job_private_t* p = job->priv;
  noshell_child_t child;
  job->duration_ns = noshell_now_ns();
  if (ex->batch) job->req.flags |= NOSHELL_RESET_SCHED;
  int err = noshell_spawn(&job->req, &child);
  for (int i = 0; i < 3; i++) {
    if (job->own_fds[i] >= 0) close(job->own_fds[i]);
    job->own_fds[i] = -1;
  }
  if (err != 0) {
    job->err = err;
    job->step = child.step;
    job->detail = child.detail;
    noshell_executor_finished(ex, job);
    return;
  }
  job->pid = child.pid;
  p->fd[FD_STDIN] = child.fds[0];
  p->fd[FD_STDOUT] = child.fds[1];
  p->fd[FD_STDERR] = child.fds[2];
  if (!noshell_executor_activate(ex, job)) {
    fail_start(ex, job, ENOMEM);
    return;
  }
  /* Pipes nobody reads (the submitter asked for no capture) do not stay open. */
  for (int i = 0; i < 2; i++)
    if (!(job->capture & (1u << i)) && p->fd[FD_STDOUT + i] >= 0) {
      close(p->fd[FD_STDOUT + i]);
      p->fd[FD_STDOUT + i] = -1;
    }
  if ((noshell_forced & NOSHELL_FAULT_CAPTURE) && capturing(job)) {
    fail_start(ex, job, EMFILE); /* fault injection: the capture cannot start */
    return;
  }
  for (int kind = FD_STDOUT; kind <= FD_STDERR; kind++) {
    if (p->fd[kind] < 0) continue;
    err = set_nonblocking(p->fd[kind]);
    if (err == 0) err = watch_fd(ex, job, kind, EPOLLIN);
    if (err != 0) {
      fail_start(ex, job, err);
      return;
    }
  }
  if (job->timeout_ms > 0) p->deadline_ns = job->duration_ns + job->timeout_ms * 1000000u;
  if (capturing(job) && job->output_grace_ms >= 0)
    p->probe_ns = job->duration_ns + NOSHELL_EXIT_PROBE_MS * 1000000u;
  if (p->fd[FD_STDIN] >= 0) {
    if (job->input_len == 0 || set_nonblocking(p->fd[FD_STDIN]) != 0) {
      close_fd(ex, job, FD_STDIN); /* no input: the child reads EOF */
    } else {
      on_input(ex, job);
      if (p->fd[FD_STDIN] >= 0 && watch_fd(ex, job, FD_STDIN, EPOLLOUT) != 0)
        close_fd(ex, job, FD_STDIN);
    }
  }
  if (!capturing(job)) watch_exit(ex, job);
}

uint64_t noshell_job_timers(noshell_executor_t* ex, noshell_job_t* job, uint64_t now) {
  noshell_job_private_t* p = job->priv;
  if (p->deadline_ns != 0 && now >= p->deadline_ns) {
    p->deadline_ns = 0;
    noshell_job_terminate(ex, job, NOSHELL_JOB_TIMED_OUT);
    if (p->finished) return 0;
  }
  if (p->force_ns != 0 && now >= p->force_ns) {
    p->force_ns = 0;
    send_signal(job, SIGKILL);
    p->abandon = 1;
    maybe_finish(ex, job);
    if (p->finished) return 0;
  }
  if (p->probe_ns != 0 && now >= p->probe_ns) {
    /* Output still open this long: learn of the exit while it is. */
    p->probe_ns = 0;
    if (!p->exited && capturing(job)) watch_exit(ex, job);
    if (p->finished) return 0;
  }
  if (p->grace_ns != 0 && now >= p->grace_ns) {
    let_output_go(ex, job);
    if (p->finished) return 0;
  }
  if (p->poll_ns != 0 && now >= p->poll_ns) {
    p->poll_ns = 0;
    if (has_exited(job->pid)) {
      on_exited(ex, job);
      if (p->finished) return 0;
    } else {
      p->poll_delay_ms = p->poll_delay_ms * 2 > MAX_POLL_DELAY_MS ? MAX_POLL_DELAY_MS : p->poll_delay_ms * 2;
      p->poll_ns = now + (uint64_t) p->poll_delay_ms * 1000000u;
    }
  }
  uint64_t next = 0;
  uint64_t due[5] = {p->deadline_ns, p->force_ns, p->poll_ns, p->probe_ns, p->grace_ns};
  for (int i = 0; i < 5; i++)
    if (due[i] != 0 && (next == 0 || due[i] < next)) next = due[i];
  return next;
}

void noshell_job_abandon_child(noshell_executor_t* ex, noshell_job_t* job) {
  /* cleanup: the group gets kill_signal now; the child itself gets its
   * death signal (SIGKILL) as this thread ends. */
  if (job->req.flags & NOSHELL_DIE_WITH_PARENT) send_signal(job, job->kill_signal);
  for (int k = 0; k < FD_KINDS; k++) close_fd(ex, job, k);
  if (job->pid <= 0) return;
  int status;
  pid_t r;
  do r = waitpid(job->pid, &status, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r != 0) return; /* reaped now (or by someone else) */
  if (ex->opts.reap_later != NULL) {
    ex->opts.reap_later(job->pid);
  } else {
    while (waitpid(job->pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
}
