// glibc's mmap threshold as `noshell run` and `noshell gearman-worker` fix it
// (src/daemon/malloc-threshold.ts): freed blocks of 1 MiB and more leave the
// process's resident memory, where with glibc's moving threshold they stayed
// in its heap.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envSetsMmapThreshold } from '../../src/daemon/malloc-threshold';
import { freePort, waitUntil } from '../fixtures/gearman/harness';

const DIST = path.resolve(__dirname, '..', '..', 'dist', 'daemon', 'malloc-threshold.js');

/**
 * In a child Node: one 1.5 MiB block freed (glibc then moves its threshold
 * past that size), then 64 more, each followed by a small block kept, all
 * 64 freed: the resident memory they held, and how much of it left.
 */
function freedMiB(fix: boolean): { held: number; freed: number; set: boolean | null } {
  const script = `
    const set = ${fix} ? require(${JSON.stringify(DIST)}).fixMmapThreshold() : null;
    const rss = () => { const s = require('fs').readFileSync('/proc/self/status', 'utf8'); const i = s.indexOf('VmRSS:'); return parseInt(s.slice(i + 6), 10) / 1024; };
    let first = Buffer.allocUnsafeSlow(1.5 * 2 ** 20).fill(1); first = null; gc(); gc();
    const before = rss();
    const keep = []; let big = [];
    for (let i = 0; i < 64; i++) { big.push(Buffer.allocUnsafeSlow(1.5 * 2 ** 20).fill(1)); keep.push(Buffer.allocUnsafeSlow(64 * 1024).fill(2)); }
    const held = rss() - before;
    big = null; gc(); gc();
    setTimeout(() => { gc(); const now = rss(); console.log(JSON.stringify({ held, freed: before + held - now, set, keep: keep.length })); }, 200);`;
  const env = { ...process.env };
  for (const v of ['GLIBC_TUNABLES', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_', 'MALLOC_TOP_PAD_', 'MALLOC_MMAP_MAX_']) delete env[v];
  return JSON.parse(execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', env }));
}

/** glibc's version, from Node's report (undefined on another C library). */
const glibc = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime;
if (glibc === undefined) console.warn('skipped: fixMmapThreshold\'s effect (glibc only; this Node does not run on glibc)');

describe('fixMmapThreshold', () => {
  it.skipIf(glibc === undefined)('freed blocks of 1.5 MiB leave the resident memory; with glibc\'s own threshold a part stays in the heap', () => {
    const fixed = freedMiB(true);
    expect(fixed.set).toBe(true);
    // 64 blocks of 1.5 MiB written: ~96 MiB held, and all of it freed.
    expect(fixed.held).toBeGreaterThan(90);
    expect(fixed.freed).toBeGreaterThan(0.95 * 96);
    // The control: the same without it keeps some of the freed blocks resident (glibc 2.36 here: ~33 of 96 MiB).
    const moving = freedMiB(false);
    expect(moving.held).toBeGreaterThan(90);
    expect(moving.freed).toBeLessThan(0.9 * 96);
  });

  it('is left to the environment where it sets the threshold', () => {
    expect(envSetsMmapThreshold({})).toBe(false);
    expect(envSetsMmapThreshold({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' })).toBe(false);
    expect(envSetsMmapThreshold({ GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=65536' })).toBe(true);
    expect(envSetsMmapThreshold({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=65536' })).toBe(true);
    expect(envSetsMmapThreshold({ GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold_x=1' })).toBe(false);
    expect(envSetsMmapThreshold({ MALLOC_MMAP_THRESHOLD_: '65536' })).toBe(true);
    // Those that freeze it at glibc's default when set.
    for (const v of ['MALLOC_TRIM_THRESHOLD_', 'MALLOC_TOP_PAD_', 'MALLOC_MMAP_MAX_']) expect(envSetsMmapThreshold({ [v]: '131072' })).toBe(true);
    for (const t of ['trim_threshold', 'top_pad', 'mmap_max']) expect(envSetsMmapThreshold({ GLIBC_TUNABLES: `glibc.malloc.${t}=131072` })).toBe(true);
    expect(envSetsMmapThreshold({ GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0:glibc.pthread.rseq=0' })).toBe(false);
  });

  it('refuses what is not a whole number of bytes glibc could take', async () => {
    const { binding } = await import('../../src/binding/binding');
    for (const bad of [-1, 0.5, 2 ** 31, NaN, '1024', undefined]) {
      expect(() => binding.mmapThreshold(bad as number)).toThrow(/mmapThreshold: bytes must be a whole number/);
    }
  });
});

// Which commands fix it: a library preloaded into noshell notes each mallopt() call ("param value"),
// then makes it. M_MMAP_THRESHOLD is -3.
const shim = `
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int mallopt(int param, int value) {
  const char* mark = getenv("MALLOPT_MARK");
  int fd = mark != NULL ? open(mark, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
  if (fd >= 0) {
    char line[32];
    int n = snprintf(line, sizeof line, "%d %d\\n", param, value);
    if (n > 0 && write(fd, line, (size_t)n) != n) abort();
    close(fd);
  }
  return ((int (*)(int, int))dlsym(RTLD_NEXT, "mallopt"))(param, value);
}
`;
const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const asRoot = process.getuid?.() === 0 ? ['--allow-root'] : [];

describe.skipIf(glibc === undefined)('the commands that own a long-lived process fix it, unless the environment does; nothing else does', () => {
  let dir = '';
  let lib = '';
  let n = 0;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-mallopt-'));
    lib = path.join(dir, 'mallopt.so');
    writeFileSync(path.join(dir, 'mallopt.c'), shim);
    execFileSync('cc', ['-O1', '-Wall', '-Wextra', '-Werror', '-shared', '-fPIC', '-o', lib, path.join(dir, 'mallopt.c'), '-ldl']);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A mark file of its own, and the environment that preloads the library with it. */
  function preload(extra: NodeJS.ProcessEnv = {}): { mark: string; env: NodeJS.ProcessEnv; calls: () => string[] } {
    const mark = path.join(dir, `calls-${++n}`);
    const env: NodeJS.ProcessEnv = { ...process.env, LD_PRELOAD: lib, MALLOPT_MARK: mark, ...extra };
    for (const v of ['GLIBC_TUNABLES', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_', 'MALLOC_TOP_PAD_', 'MALLOC_MMAP_MAX_']) if (!(v in extra)) delete env[v];
    return { mark, env, calls: () => (existsSync(mark) ? readFileSync(mark, 'utf8').split('\n').filter((l) => l !== '') : []) };
  }

  /** Starts a noshell command, waits until `ready(stdout + stderr)`, stops it with SIGTERM. */
  async function during(args: string[], env: NodeJS.ProcessEnv, ready: (out: string) => boolean): Promise<string> {
    const p = spawn(process.execPath, [CLI, ...args, ...asRoot], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    p.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise((r) => p.once('exit', r));
    try {
      await waitUntil(() => ready(out) || p.exitCode !== null, 15_000, `noshell ${args[0]} to be running`);
      expect(p.exitCode, out).toBeNull();
    } finally {
      p.kill('SIGTERM');
      const t = setTimeout(() => p.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    }
    return out;
  }

  it('the library does see a mallopt() call (the checks below can fail)', () => {
    const { env, calls } = preload();
    const dist = path.resolve(__dirname, '..', '..', 'dist', 'daemon', 'malloc-threshold.js');
    execFileSync(process.execPath, ['-e', `require(${JSON.stringify(dist)}).fixMmapThreshold(65536)`], { env });
    expect(calls()).toEqual(['-3 65536']);
  });

  it('noshell run fixes it at 1 MiB once; not with MALLOC_MMAP_THRESHOLD_ or the tunable set; never `run --check`', async () => {
    const file = path.join(dir, 'checks.json');
    writeFileSync(file, JSON.stringify({ checks: [{ id: 'true', command: ['/bin/true'], interval: '200ms' }] }));
    const firstResult = (out: string) => out.includes('"stateName":"OK"');
    const plain = preload();
    await during(['run', file], plain.env, firstResult);
    expect(plain.calls()).toEqual([`-3 ${1024 * 1024}`]);
    for (const extra of [{ MALLOC_MMAP_THRESHOLD_: '262144' }, { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=262144' }]) {
      const set = preload(extra);
      await during(['run', file], set.env, firstResult);
      expect(set.calls(), JSON.stringify(extra)).toEqual([]);
    }
    const check = preload();
    const r = spawnSync(process.execPath, [CLI, 'run', '--check', file, ...asRoot], { env: check.env, encoding: 'utf8', timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(check.calls()).toEqual([]);
  }, 90_000);

  it('noshell gearman-worker fixes it at 1 MiB before it dials; not with the environment\'s; never for --help', async () => {
    // Nothing listens there: the worker logs its failed dial, which is after the call.
    const server = `--server=127.0.0.1:${await freePort()}`;
    const dialled = (out: string) => out.includes('127.0.0.1');
    const plain = preload();
    await during(['gearman-worker', server, '--encryption=no', '--hosts'], plain.env, dialled);
    expect(plain.calls()).toEqual([`-3 ${1024 * 1024}`]);
    const set = preload({ MALLOC_MMAP_THRESHOLD_: '262144' });
    await during(['gearman-worker', server, '--encryption=no', '--hosts'], set.env, dialled);
    expect(set.calls()).toEqual([]);
    const help = preload();
    const r = spawnSync(process.execPath, [CLI, 'gearman-worker', '--help'], { env: help.env, encoding: 'utf8', timeout: 30_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(help.calls()).toEqual([]);
  }, 90_000);
});
