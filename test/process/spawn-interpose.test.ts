// The clone child runs on the parent's memory until execve, so it makes raw
// system calls only: a library preloaded into Node (an execve logger in
// /etc/ld.so.preload, a signal-chaining library, fakeroot) must never run in
// it. This preloads a library that replaces the libc functions a spawn child
// could call and notes each call made in a process other than the one it was
// loaded in (a child before execve); after execve the child is a new program
// and loads it anew. A C program spawning with vfork and glibc's wrappers
// shows the library does catch such calls (the check can fail).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '..', '..');

const library = `
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
static long origin;
static char mark[4096];
__attribute__((constructor)) static void init(void) {
  const char* m = getenv("INTERPOSE_MARK");
  origin = syscall(SYS_getpid);
  if (m != NULL && strlen(m) < sizeof(mark)) strcpy(mark, m);
}
static void note(const char* name) {
  if (mark[0] == 0 || syscall(SYS_getpid) == origin) return;
  long fd = syscall(SYS_openat, AT_FDCWD, mark, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  syscall(SYS_write, fd, name, strlen(name));
  syscall(SYS_write, fd, "\\n", 1);
  syscall(SYS_close, fd);
}
#define NEXT(name) ((__typeof__(&name)) dlsym(RTLD_NEXT, #name))
int execve(const char* p, char* const a[], char* const e[]) { note("execve"); return NEXT(execve)(p, a, e); }
int sigaction(int s, const struct sigaction* n, struct sigaction* o) { note("sigaction"); return NEXT(sigaction)(s, n, o); }
int dup2(int a, int b) { note("dup2"); return NEXT(dup2)(a, b); }
int dup3(int a, int b, int f) { note("dup3"); return NEXT(dup3)(a, b, f); }
int fcntl(int fd, int cmd, ...) { va_list ap; va_start(ap, cmd); long arg = va_arg(ap, long); va_end(ap); note("fcntl"); return NEXT(fcntl)(fd, cmd, arg); }
int chdir(const char* p) { note("chdir"); return NEXT(chdir)(p); }
int close(int fd) { note("close"); return NEXT(close)(fd); }
int open(const char* p, int f, ...) { va_list ap; va_start(ap, f); int m = va_arg(ap, int); va_end(ap); note("open"); return NEXT(open)(p, f, m); }
int openat(int d, const char* p, int f, ...) { va_list ap; va_start(ap, f); int m = va_arg(ap, int); va_end(ap); note("openat"); return NEXT(openat)(d, p, f, m); }
int setpgid(pid_t a, pid_t b) { note("setpgid"); return NEXT(setpgid)(a, b); }
ssize_t write(int fd, const void* b, size_t n) { note("write"); return NEXT(write)(fd, b, n); }
off_t lseek(int fd, off_t o, int w) { note("lseek"); return NEXT(lseek)(fd, o, w); }
void _exit(int s) { note("_exit"); NEXT(_exit)(s); __builtin_unreachable(); }
`;

// What glibc's wrappers in a vfork child look like to the library.
const control = `
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
  char* argv[] = {"/bin/true", NULL};
  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  pid_t pid = vfork();
  if (pid == 0) {
    sigaction(SIGPIPE, &dfl, NULL);
    execve(argv[0], argv, NULL);
    _exit(127);
  }
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
`;

let dir = '';
let lib = '';

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-interpose-'));
  lib = path.join(dir, 'interpose.so');
  writeFileSync(path.join(dir, 'interpose.c'), library);
  writeFileSync(path.join(dir, 'control.c'), control);
  execFileSync('cc', ['-O1', '-Wall', '-shared', '-fPIC', '-o', lib, path.join(dir, 'interpose.c'), '-ldl']);
  execFileSync('cc', ['-O1', '-Wall', '-o', path.join(dir, 'control'), path.join(dir, 'control.c')]);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function preloaded(program: string, args: string[], mark: string) {
  return spawnSync(program, args, {
    encoding: 'utf8', timeout: 60_000,
    env: { ...process.env, LD_PRELOAD: lib, INTERPOSE_MARK: mark },
  });
}

describe('a library preloaded into Node never runs in a spawn child', () => {
  it('the library does catch libc calls made in a vfork child (glibc wrappers): the check below can fail', () => {
    const mark = path.join(dir, 'control.mark');
    const r = preloaded(path.join(dir, 'control'), [], mark);
    expect(r.status).toBe(0);
    const calls = readFileSync(mark, 'utf8').trim().split('\n');
    expect(calls).toEqual(expect.arrayContaining(['sigaction', 'execve']));
  });

  it("'auto' (and 'vfork' by name, with cwd, stdin input and a missing program): no call in the child", () => {
    const mark = path.join(dir, 'noshell.mark');
    const script = `
      const { execFile, exec } = require(${JSON.stringify(path.join(root, 'dist', 'index.js'))});
      (async () => {
        const out = [];
        for (let i = 0; i < 5; i++) out.push((await execFile('/bin/echo', ['hi'])).stdout);
        out.push((await execFile('/bin/pwd', [], { cwd: '/usr' })).stdout);
        out.push((await execFile('/bin/cat', [], { input: 'in', method: 'vfork' })).stdout);
        out.push(await exec('/nonexistent/x').catch((e) => e.code));
        out.push(await execFile('/bin/sh', ['-c', 'exit 3'], { reject: false }).then((r) => r.exitCode));
        process.stdout.write(JSON.stringify(out));
      })();
    `;
    const r = preloaded(process.execPath, ['-e', script], mark);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(['hi\n', 'hi\n', 'hi\n', 'hi\n', 'hi\n', '/usr\n', 'in', 'ENOENT', 3]);
    // Nothing noted: no wrapper the library replaces ran in a child before its execve.
    expect(existsSync(mark) ? readFileSync(mark, 'utf8') : '').toBe('');
  });
});
