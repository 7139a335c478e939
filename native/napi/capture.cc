#include "capture.h"

#include "../core/spawn.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

namespace noshell {
namespace {

const size_t kFirstChunk = 4096;
const size_t kReadChunk = 64 * 1024;

// Where bytes past max go in truncate mode: read, so the child never blocks
// on a full pipe, and dropped (checks: "truncated", not failed).
thread_local char discard[kReadChunk];

void Finish(Capture* c) {
  if (!c->active) return;
  c->active = false;
  uv_read_stop(reinterpret_cast<uv_stream_t*>(&c->pipe));
  uv_close(c->handle(), c->on_close);  // closes the fd too
}

// Makes room for the next read; false when out of memory.
bool Reserve(Capture* c, size_t want) {
  if (c->cap - c->len >= want) return true;
  size_t cap = c->cap == 0 ? kFirstChunk : c->cap;
  while (cap - c->len < want) cap *= 2;
  char* data = static_cast<char*>(realloc(c->data, cap));
  if (data == nullptr) return false;
  c->data = data;
  c->cap = cap;
  return true;
}

void OnAlloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf) {
  (void) suggested;
  Capture* c = static_cast<Capture*>(handle->data);
  if (c->truncate && c->len >= c->max) {
    *buf = uv_buf_init(discard, sizeof(discard));
    return;
  }
  // Read at most one byte past max (truncate: up to max): enough to know it
  // overflowed.
  size_t limit = c->max + (c->truncate ? 0 : 1) - c->len;
  size_t want = limit < kReadChunk ? limit : kReadChunk;
  if (!Reserve(c, want < kFirstChunk ? want : kFirstChunk)) {
    *buf = uv_buf_init(nullptr, 0);  // libuv reports UV_ENOBUFS: ends the capture
    return;
  }
  size_t room = c->cap - c->len;
  *buf = uv_buf_init(c->data + c->len, static_cast<unsigned>(room < want ? room : want));
}

// Counts n bytes read into the buffer, up to max (their order too, with
// `all`); whether the stream goes on (false: past max, or no memory to
// record the order).
bool Keep(Capture* c, size_t n) {
  size_t kept = c->len + n <= c->max ? n : c->max - c->len;
  bool recorded = c->runs == nullptr || noshell_runs_add(c->runs, c->stream, kept) == 0;
  c->len += kept;
  if (kept < n) c->overflow = true;
  return kept == n && recorded;
}

void OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  Capture* c = static_cast<Capture*>(stream->data);
  if (nread == 0) return;  // EAGAIN
  if (nread > 0) {
    if (buf->base == discard) {
      c->overflow = true;
      return;
    }
    if (Keep(c, static_cast<size_t>(nread))) return;
  }
  // EOF, a read error (EIO…), no memory, or past max: the output ends here.
  Finish(c);
  c->on_end(c);
}

}  // namespace

int CaptureStart(uv_loop_t* loop, Capture* c, int fd, size_t max,
                 bool truncate, CaptureEndCb on_end, uv_close_cb on_close,
                 void* owner) {
  c->max = max;
  c->truncate = truncate;
  c->on_end = on_end;
  c->on_close = on_close;
  c->owner = owner;
  int err = uv_pipe_init(loop, &c->pipe, 0);
  if (err != 0) {
    close(fd);
    return err;
  }
  c->initialized = true;
  c->pipe.data = c;
  c->active = true;
  // uv_pipe_open makes the fd non-blocking; from then on libuv owns it. If
  // anything fails the handle still closes through on_close, and the caller
  // learns that reading never started: nothing would ever call on_end (a
  // capture that silently never ends hangs its exec and pins its zombie).
  err = uv_pipe_open(&c->pipe, fd);
  if (err != 0) {
    close(fd);
  } else if (noshell_forced & NOSHELL_FAULT_CAPTURE) {
    err = UV_EMFILE;
  } else {
    err = uv_read_start(reinterpret_cast<uv_stream_t*>(&c->pipe), OnAlloc,
                        OnRead);
  }
  if (err != 0) Finish(c);
  return err;
}

void CaptureStop(Capture* c) {
  Finish(c);
}

bool CaptureDrain(Capture* c) {
  if (!c->active) return false;
  uv_os_fd_t fd;
  if (uv_fileno(c->handle(), &fd) != 0) return true;
  // To EAGAIN or the end, whatever each read's size (a packet-mode pipe
  // gives one write per read), at most 256 reads.
  for (int k = 0; k < 256; k++) {
    uv_buf_t buf;
    OnAlloc(c->handle(), kReadChunk, &buf);
    if (buf.base == nullptr) return true;  // no memory: what was read is kept
    ssize_t n = read(fd, buf.base, buf.len);
    if (n > 0) {
      if (buf.base == discard) {
        c->overflow = true;
        continue;
      }
      if (Keep(c, static_cast<size_t>(n))) continue;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      return true;
    }
    Finish(c);  // EOF, an error, or past max: ended
    return false;
  }
  return true;
}

char* CaptureTake(Capture* c, size_t* len) {
  char* data = c->data;
  *len = c->len;
  c->data = nullptr;
  c->len = c->cap = 0;
  return data;
}

}  // namespace noshell
