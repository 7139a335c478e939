#include "capture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

namespace noshell {
namespace {

const size_t kFirstChunk = 4096;
const size_t kReadChunk = 64 * 1024;

void Finish(Capture* c) {
  if (!c->active) return;
  c->active = false;
  uv_poll_stop(&c->poll);
  // uv_poll_stop removed the fd from epoll: closing it now is safe.
  close(c->fd);
  c->fd = -1;
  c->has_handle = false;
  uv_close(reinterpret_cast<uv_handle_t*>(&c->poll), c->on_close);
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

void OnReadable(uv_poll_t* handle, int status, int events) {
  (void) events;
  Capture* c = static_cast<Capture*>(handle->data);
  if (status < 0) {
    Finish(c);
    c->on_end(c);
    return;
  }
  for (;;) {
    char* dst;
    size_t room;
    if (c->truncate && c->len >= c->max) {
      // Output past max is read and dropped, so the child never blocks on
      // a full pipe (checks: "truncated", not failed).
      static thread_local char discard[kReadChunk];
      dst = discard;
      room = sizeof(discard);
    } else {
      // Read at most one byte past max (truncate: up to max): enough to
      // know it overflowed.
      size_t limit = c->max + (c->truncate ? 0 : 1) - c->len;
      size_t want = limit < kReadChunk ? limit : kReadChunk;
      if (!Reserve(c, want < kFirstChunk ? want : kFirstChunk)) {
        Finish(c);
        c->on_end(c);
        return;
      }
      dst = c->data + c->len;
      room = c->cap - c->len;
      if (room > want) room = want;
    }
    ssize_t n = read(c->fd, dst, room);
    if (n > 0) {
      if (dst != c->data + c->len) {
        c->overflow = true;
      } else {
        c->len += static_cast<size_t>(n);
        if (c->len > c->max) {
          c->len = c->max;
          c->overflow = true;
          Finish(c);
          c->on_end(c);
          return;
        }
      }
      // A short read means the pipe is empty for now; skip the EAGAIN round.
      if (static_cast<size_t>(n) < room) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    Finish(c);  // EOF, or a read error (EIO…): the output ends here
    c->on_end(c);
    return;
  }
}

}  // namespace

int CaptureStart(uv_loop_t* loop, Capture* c, int fd, size_t max,
                 bool truncate, CaptureEndCb on_end, uv_close_cb on_close,
                 void* owner) {
  c->fd = fd;
  c->max = max;
  c->truncate = truncate;
  c->on_end = on_end;
  c->on_close = on_close;
  c->owner = owner;
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    int err = -errno;
    close(fd);
    c->fd = -1;
    return err;
  }
  int err = uv_poll_init(loop, &c->poll, fd);
  if (err != 0) {
    close(fd);
    c->fd = -1;
    return err;
  }
  c->poll.data = c;
  c->has_handle = true;
  c->active = true;
  // If polling cannot start, the capture simply ends at once (c->active is
  // false on return); its handle still closes through on_close.
  if (uv_poll_start(&c->poll, UV_READABLE | UV_DISCONNECT, OnReadable) != 0)
    Finish(c);
  return 0;
}

void CaptureStop(Capture* c) {
  Finish(c);
}

char* CaptureTake(Capture* c, size_t* len) {
  char* data = c->data;
  *len = c->len;
  c->data = nullptr;
  c->len = c->cap = 0;
  return data;
}

}  // namespace noshell
