/* noshell spawning core: plain C, no N-API.
 *
 * noshell_spawn() builds a child from a request and starts it with
 * posix_spawn, clone(CLONE_VM|CLONE_VFORK) or fork. It returns 0 or an errno
 * value and names the failing step; it never leaves an fd or a process behind
 * when it fails.
 */
#ifndef NOSHELL_SPAWN_H_
#define NOSHELL_SPAWN_H_

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  NOSHELL_METHOD_AUTO = 0,
  NOSHELL_METHOD_POSIX_SPAWN = 1,
  NOSHELL_METHOD_VFORK = 2,
  NOSHELL_METHOD_FORK = 3
} noshell_method_t;

typedef enum {
  NOSHELL_STDIO_PIPE = 0,    /* new pipe; the parent gets the other end */
  NOSHELL_STDIO_IGNORE = 1,  /* /dev/null */
  NOSHELL_STDIO_INHERIT = 2, /* the parent's fd with the same number */
  NOSHELL_STDIO_FD = 3,      /* the caller's fd (req->stdio[i].fd) */
  NOSHELL_STDIO_STDOUT = 4   /* stderr only: whatever stdout became (2>&1) */
} noshell_stdio_kind_t;

typedef struct {
  noshell_stdio_kind_t kind;
  int fd;
} noshell_stdio_t;

enum {
  NOSHELL_NEW_PGROUP = 1, /* child leads its own process group */
  NOSHELL_SET_UID = 2,
  NOSHELL_SET_GID = 4,
  NOSHELL_SET_GROUPS = 8, /* groups/ngroups were given (even an empty list) */
  NOSHELL_RESET_SCHED = 16, /* the child runs SCHED_OTHER whatever the spawning
                             * thread runs (the executor runs SCHED_BATCH) */
  NOSHELL_NEW_SESSION = 32,  /* setsid(): a new session, led by the child (and
                              * so a new process group, whatever NEW_PGROUP) */
  NOSHELL_DIE_WITH_PARENT = 64, /* PR_SET_PDEATHSIG(death_signal), set after the
                                 * credential switch; clone/fork only */
  NOSHELL_SET_NICE = 128,    /* setpriority(nice); clone/fork only */
  NOSHELL_SET_CGROUP = 256,  /* move into the cgroup v2 directory `cgroup`
                              * before execve; clone/fork only */
  NOSHELL_JOIN_PGROUP = 512  /* setpgid(0, pgid): join the group of an
                              * earlier child (a pipeline's other stages) */
};

/* One redirection, applied in the child in order after the credential
 * switch (so files are opened as the child's user) and the chdir (relative
 * paths are the child's cwd's), as the shell applies `N>file`, `N>&M` and
 * `N>&-` after the pipes of a pipeline. clone/fork only. */
typedef enum {
  NOSHELL_REDIRECT_OPEN = 0,  /* open(path, oflags, 0666 & ~umask) onto fd */
  NOSHELL_REDIRECT_DUP = 1,   /* dup2(src, fd); src must be open */
  NOSHELL_REDIRECT_CLOSE = 2  /* close(fd) */
} noshell_redirect_kind_t;

typedef struct {
  int fd;                     /* 0-9, as the shell takes them */
  noshell_redirect_kind_t kind;
  int oflags;                 /* OPEN: O_RDONLY, O_WRONLY|O_CREAT|O_TRUNC, ... */
  int src;                    /* DUP: the fd copied */
  const char* path;           /* OPEN */
} noshell_redirect_t;

/* One resource limit for the child (setrlimit before execve; clone/fork
 * only). NOSHELL_RLIM_KEEP keeps the value the child inherits. */
#define NOSHELL_RLIM_INFINITY (~(unsigned long long) 0)
#define NOSHELL_RLIM_KEEP (~(unsigned long long) 0 - 1)
typedef struct {
  int resource;              /* RLIMIT_* */
  unsigned long long soft;
  unsigned long long hard;
} noshell_rlimit_t;

/* Steps that can fail; noshell_step_name() gives their names. */
typedef enum {
  NOSHELL_STEP_NONE = 0,
  NOSHELL_STEP_VALIDATE,
  NOSHELL_STEP_RESOLVE,  /* PATH search */
  NOSHELL_STEP_STDIO,    /* a caller's fd is not open */
  NOSHELL_STEP_PIPE,
  NOSHELL_STEP_DEVNULL,
  NOSHELL_STEP_ATTR,     /* posix_spawn attr/file actions setup */
  NOSHELL_STEP_CLONE,    /* the clone/fork/posix_spawn call itself */
  NOSHELL_STEP_SETPGID,
  NOSHELL_STEP_DUP2,
  NOSHELL_STEP_CHDIR,
  NOSHELL_STEP_SETGROUPS,
  NOSHELL_STEP_SETGID,
  NOSHELL_STEP_SETUID,
  NOSHELL_STEP_EXEC,
  NOSHELL_STEP_CAPTURE,  /* (glue) the output capture or exit watch could not start */
  NOSHELL_STEP_SETSID,
  NOSHELL_STEP_CGROUP,   /* opening <cgroup>/cgroup.procs, or the move */
  NOSHELL_STEP_SETRLIMIT,
  NOSHELL_STEP_SETPRIORITY,
  NOSHELL_STEP_PDEATHSIG, /* prctl, or the parent already gone */
  NOSHELL_STEP_REDIRECT,  /* a redirection (noshell_child_t.detail says which) */
  NOSHELL_STEP_COUNT
} noshell_step_t;

typedef struct {
  const char* file;          /* program; searched in search_path if no '/' */
  char* const* argv;         /* NULL-terminated; argv[0] may differ (argv0) */
  char* const* envp;         /* NULL-terminated; NULL means the parent's environ
                              * (read unlocked: the addon always passes a
                              * snapshot, env-snapshot.h) */
  const char* search_path;   /* PATH to search; NULL: environ's PATH when envp
                              * is NULL, else "/bin:/usr/bin" */
  const char* cwd;           /* NULL: the parent's */
  noshell_stdio_t stdio[3];
  unsigned flags;
  uid_t uid;
  gid_t gid;
  const gid_t* groups;       /* supplementary groups with SET_GID (ngroups may be 0) */
  size_t ngroups;
  noshell_method_t method;
  int death_signal;          /* with DIE_WITH_PARENT */
  int nice;                  /* with SET_NICE: -20..19 */
  const char* cgroup;        /* with SET_CGROUP: a cgroup v2 directory */
  const noshell_rlimit_t* rlimits;
  size_t nrlimits;
  pid_t pgid;                /* with JOIN_PGROUP */
  const noshell_redirect_t* redirects;
  size_t nredirects;
} noshell_spawn_t;

typedef struct {
  pid_t pid;
  int fds[3];                /* the parent's ends of pipes, or -1 */
  noshell_method_t method;   /* the method actually used */
  noshell_step_t step;       /* on failure: the step that failed */
  int detail;                /* step REDIRECT: the index of the redirection, else -1 */
} noshell_child_t;

int noshell_spawn(const noshell_spawn_t* req, noshell_child_t* child);
const char* noshell_step_name(noshell_step_t step);

/* Fallbacks a test can force (read once at load by the glue): the loop over
 * /proc/self/fd instead of close_range(), a status poll instead of pidfds,
 * glibc before 2.34 (for 'posix_spawn' by name; 'auto' clones anyway), the
 * clone/fork child resetting every signal as without /proc. */
enum {
  NOSHELL_FALLBACK_CLOSE_RANGE = 1,
  NOSHELL_FALLBACK_PIDFD = 2,
  NOSHELL_FAULT_CAPTURE = 4, /* fault injection: every output capture fails to start */
  NOSHELL_FALLBACK_SPAWN_NP = 8, /* as on glibc < 2.34: no posix_spawn
                                  * addclosefrom_np / addchdir_np */
  NOSHELL_FALLBACK_PROC_SIGNALS = 16 /* no /proc/self/status */
};
extern unsigned noshell_forced;

/* posix_spawn_file_actions_addclosefrom_np (glibc 2.34) and
 * posix_spawn_file_actions_addchdir_np (2.29), found at run time by whoever
 * loads the core (the glue: addon.cc). A link-time reference would make the
 * prebuilt addon need that glibc; NULL means "not there": 'posix_spawn'
 * by name then closes fds one by one and refuses a cwd ('auto' clones). */
extern void* noshell_addclosefrom_np;
extern void* noshell_addchdir_np;

/* Resolve file against search_path the way execvp in the child would
 * (relative entries against cwd, if not NULL), without execvp's ENOEXEC
 * fallback to /bin/sh. Checks run with the parent's credentials, so a spawn
 * that changes uid/gid searches in the child instead (child.c). Writes into
 * buf (size len). Returns 0 or errno. */
int noshell_resolve(const char* file, const char* search_path,
                    const char* cwd, char* buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* NOSHELL_SPAWN_H_ */
