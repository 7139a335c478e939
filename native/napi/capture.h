// Output capture for the buffered paths (exec, runCheck): reads a pipe on the
// libuv loop (a uv_pipe_t: one epoll registration, libuv's read loop)
// straight into one growing buffer, no JS stream per chunk.
#ifndef NOSHELL_CAPTURE_H_
#define NOSHELL_CAPTURE_H_

#include <stddef.h>
#include <uv.h>

#include "../executor/output-runs.h"

namespace noshell {

struct Capture;
// Called once when the stream is finished: EOF, read error, or more than
// `max` bytes (c->overflow) unless c->truncate. The handle is closing by then.
typedef void (*CaptureEndCb)(Capture* c);

struct Capture {
  uv_pipe_t pipe;
  bool initialized = false; // the handle exists: on_close will run once
  bool active = false;     // being read
  bool overflow = false;   // more than max bytes came
  bool truncate = false;   // past max: keep reading, drop the bytes
  char* data = nullptr;
  size_t len = 0;
  size_t cap = 0;
  size_t max = 0;
  // With exec's `all`: the watch's record of the order (shared by both
  // captures) and this one's stream (0 stdout, 1 stderr).
  noshell_runs_t* runs = nullptr;
  int stream = 0;
  CaptureEndCb on_end = nullptr;
  uv_close_cb on_close = nullptr;
  void* owner = nullptr;

  uv_handle_t* handle() { return reinterpret_cast<uv_handle_t*>(&pipe); }
};

// Takes ownership of fd (a pipe's read end). Returns 0 or a libuv error; on
// error the fd is closed, on_end never runs and the capture is not active.
// Whenever c->initialized is set on return (error or not), on_close runs
// once the handle is closed.
int CaptureStart(uv_loop_t* loop, Capture* c, int fd, size_t max,
                 bool truncate, CaptureEndCb on_end, uv_close_cb on_close,
                 void* owner);

// Stops reading (if still active) and closes the handle and its fd. No on_end.
void CaptureStop(Capture* c);

// Reads what the pipe holds now without waiting (a bounded number of reads);
// whether the stream is still open after. A stream that ended here (EOF, an
// error, past max without truncate) is finished without on_end.
bool CaptureDrain(Capture* c);

// Hands the buffer to the caller (free() it); the capture forgets it.
char* CaptureTake(Capture* c, size_t* len);

}  // namespace noshell

#endif  // NOSHELL_CAPTURE_H_
