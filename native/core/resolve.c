/* PATH resolution as execvp in the child would do it, checked up front so
 * that a missing program is ENOENT from spawn, never an exit status. */
#define _GNU_SOURCE
#include "spawn.h"
#include "spawn-internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether execve() of `path` can work, checked as the parent. A relative
 * candidate is checked against the child's cwd (where execve will run), so
 * PATH entries like "." or "" mean what they mean to execvp in the child. */
static int is_exec_candidate(const char* path, const char* cwd,
                             int* saw_eacces) {
  char full[PATH_MAX];
  struct stat st;
  if (cwd != NULL && path[0] != '/') {
    int n = snprintf(full, sizeof(full), "%s/%s", cwd, path);
    if (n < 0 || (size_t) n >= sizeof(full)) return 0;
    path = full;
  }
  /* Retried on EINTR: a signal on a mount that honours interrupts (FUSE)
   * must not make a directory look empty and pick a later PATH entry. */
  int r;
  while ((r = noshell_stat(path, &st)) != 0 && errno == EINTR) {
  }
  if (r != 0) {
    if (errno == EACCES) *saw_eacces = 1;
    return 0;
  }
  /* execve() of a directory fails with EACCES; execvp skips it and says so. */
  if (S_ISDIR(st.st_mode)) {
    *saw_eacces = 1;
    return 0;
  }
  while ((r = access(path, X_OK)) != 0 && errno == EINTR) {
  }
  if (r != 0) {
    *saw_eacces = 1;
    return 0;
  }
  return 1;
}

int noshell_resolve(const char* file, const char* search_path,
                    const char* cwd, char* buf, size_t len) {
  size_t flen = strlen(file);
  int saw_eacces = 0;
  const char* p;

  if (flen == 0) return ENOENT;
  if (strchr(file, '/') != NULL) {
    if (flen >= len) return ENAMETOOLONG;
    memcpy(buf, file, flen + 1);
    return 0;
  }
  if (flen > NAME_MAX) return ENAMETOOLONG;
  if (search_path == NULL) search_path = "/bin:/usr/bin";

  p = search_path;
  for (;;) {
    const char* end = strchrnul(p, ':');
    size_t dlen = (size_t) (end - p);
    /* An empty PATH entry means the current directory, as in execvp. */
    if (dlen == 0) {
      if (flen + 1 <= len) {
        memcpy(buf, file, flen + 1);
        if (is_exec_candidate(buf, cwd, &saw_eacces)) return 0;
      }
    } else if (dlen + 1 + flen + 1 <= len) {
      memcpy(buf, p, dlen);
      buf[dlen] = '/';
      memcpy(buf + dlen + 1, file, flen + 1);
      if (is_exec_candidate(buf, cwd, &saw_eacces)) return 0;
    }
    if (*end == '\0') break;
    p = end + 1;
  }
  return saw_eacces ? EACCES : ENOENT;
}
