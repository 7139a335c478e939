/* Shared between spawn.c and child.c; not part of the core's interface. */
#ifndef NOSHELL_SPAWN_INTERNAL_H_
#define NOSHELL_SPAWN_INTERNAL_H_

#include "spawn.h"

typedef struct {
  int src[3];          /* fd that becomes the child's 0, 1, 2 */
  int close_after[6];  /* the child's pipe ends and moved fds */
  int nclose;
  int devnull;         /* the process-wide /dev/null, never closed */
} stdio_plan_t;

/* Opens pipes (the parent's ends go to child->fds) and works out
 * plan->src. Returns 0 or errno with child->step set. */
int noshell_plan_stdio(const noshell_spawn_t* req, noshell_child_t* child,
                       stdio_plan_t* plan);

/* clone(CLONE_VM|CLONE_VFORK), or fork() when use_fork is set. path NULL:
 * the child searches `search` for req->file itself (after changing its
 * credentials). */
int noshell_spawn_clone(const noshell_spawn_t* req, const char* path,
                        const char* search, const stdio_plan_t* plan,
                        noshell_child_t* child, int use_fork);

#endif /* NOSHELL_SPAWN_INTERNAL_H_ */
