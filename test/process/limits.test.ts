// What a child runs under: rlimits, nice, a cgroup and a new session, each
// read back from inside the child (/proc/self/limits, ulimit, nice,
// /proc/self/cgroup, /proc/self/stat), on the executor path (exec) and the
// event-loop path (spawn); and the errors that keep a program from running
// with less than was asked.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, statfsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, runCheck, spawn, SpawnError, type Rlimits, type SpawnOptions } from '../../src/index';
import { parseRlimitsText } from '../../src/process/limits';
import { isRoot, NOBODY } from '../unprivileged';

const CGROUP2_MAGIC = 0x63677270;

/** The child's output through spawn (the event-loop path), read to its end. */
async function viaSpawn(file: string, args: string[], options: SpawnOptions): Promise<string> {
  const child = spawn(file, args, { ...options, stdin: 'ignore', stderr: 'inherit' });
  let out = '';
  child.stdout!.setEncoding('utf8');
  for await (const chunk of child.stdout!) out += chunk as string;
  const status = await child.exited;
  expect(status.exitCode).toBe(0);
  return out;
}

const paths = {
  exec: async (file: string, args: string[], options: SpawnOptions) => (await execFile(file, args, options)).stdout,
  spawn: viaSpawn,
};

/** /proc/self/limits as { 'Max open files': ['64', '128'] }. */
function limitsTable(text: string): Map<string, [string, string]> {
  const out = new Map<string, [string, string]>();
  for (const line of text.split('\n').slice(1)) {
    // "Max cpu time              10                   20                   seconds"
    const name = line.slice(0, 26).trim();
    const [soft, hard] = line.slice(26).trim().split(/ +/);
    if (name !== '') out.set(name, [soft, hard]);
  }
  return out;
}

/** Fields of /proc/self/stat after the command name: [state, ppid, pgrp, session, …, nice at 16]. */
function statFields(text: string): string[] {
  return text.slice(text.lastIndexOf(')') + 2).trim().split(' ');
}

const EVERY_LIMIT: Rlimits = {
  cpu: { soft: 100, hard: '200s' }, fsize: '1G', data: '3G', stack: '8M', core: 0, rss: '1G', nproc: { soft: 4000, hard: 5000 },
  nofile: { soft: 64, hard: 128 }, memlock: '64K', as: 'unlimited', locks: 1000, sigpending: 500, msgqueue: 819200,
  nice: 0, rtprio: 0, rttime: { soft: 1_000_000, hard: Infinity },
};
// The kernel's names for them in /proc/self/limits, and what each must read.
const EXPECTED: Array<[string, string, string]> = [
  ['Max cpu time', '100', '200'], ['Max file size', String(2 ** 30), String(2 ** 30)],
  ['Max data size', String(3 * 2 ** 30), String(3 * 2 ** 30)], ['Max stack size', String(8 * 2 ** 20), String(8 * 2 ** 20)],
  ['Max core file size', '0', '0'], ['Max resident set', String(2 ** 30), String(2 ** 30)], ['Max processes', '4000', '5000'],
  ['Max open files', '64', '128'], ['Max locked memory', '65536', '65536'], ['Max address space', 'unlimited', 'unlimited'],
  ['Max file locks', '1000', '1000'], ['Max pending signals', '500', '500'], ['Max msgqueue size', '819200', '819200'],
  ['Max nice priority', '0', '0'], ['Max realtime priority', '0', '0'], ['Max realtime timeout', '1000000', 'unlimited'],
];

describe.each(Object.entries(paths))('limits seen from inside the child (%s)', (_name, run) => {
  it('every one of the 16 rlimits by its name, soft and hard, in /proc/self/limits', async () => {
    const table = limitsTable(await run('/bin/cat', ['/proc/self/limits'], { rlimits: EVERY_LIMIT }));
    for (const [name, soft, hard] of EXPECTED) expect([name, ...(table.get(name) ?? [])]).toEqual([name, soft, hard]);
  });

  it('ulimit -n, a soft limit alone keeping the inherited hard one, and nice', async () => {
    const out = await run('/bin/sh', ['-c', 'ulimit -S -n; ulimit -H -n; nice'], { rlimits: { nofile: { soft: 50 } }, nice: 7 });
    const [soft, hard, nice] = out.trim().split('\n');
    expect(soft).toBe('50');
    expect(hard).toBe(readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'))!.trim().split(/ +/)[4]);
    expect(nice).toBe('7');
  });

  it('detached: the child leads a new session and its group', async () => {
    const [pid] = (await run('/bin/sh', ['-c', 'echo $$; cat /proc/$$/stat'], { detached: true })).split('\n');
    const stat = statFields((await run('/bin/sh', ['-c', 'cat /proc/$$/stat'], { detached: true })).trim());
    expect(Number(pid)).toBeGreaterThan(0);
    expect(stat[2]).toBe(stat[3]); // pgrp = session
    const own = statFields(readFileSync('/proc/self/stat', 'utf8'));
    expect(stat[3]).not.toBe(own[3]);
    const plain = statFields((await run('/bin/sh', ['-c', 'cat /proc/$$/stat'], {})).trim());
    expect(plain[3]).toBe(own[3]); // without detached: our session
  });

  // nobody may not lower its nice value: -5 shows the settings come before the switch.
  it.runIf(isRoot)('as nobody: the limits and a lower nice are set before the switch', async () => {
    const out = await run('/bin/sh', ['-c', 'id -u; ulimit -S -n; ulimit -H -n; nice'], {
      uid: NOBODY, gid: NOBODY, rlimits: { nofile: { soft: 100, hard: 200 } }, nice: -5,
    });
    expect(out.trim().split('\n')).toEqual([String(NOBODY), '100', '200', '-5']);
  });
});

/** A fresh cgroup v2 directory (root, cgroup2 at /sys/fs/cgroup or its unified/), or why there is none. */
function makeCgroup(): string | Error {
  if (!isRoot) return new Error('not root');
  for (const root of ['/sys/fs/cgroup/unified', '/sys/fs/cgroup']) {
    try {
      if (!existsSync(root) || statfsSync(root).type !== CGROUP2_MAGIC) continue;
      const dir = path.join(root, `noshell-test-${process.pid}`);
      mkdirSync(dir);
      return dir;
    } catch (err) {
      return err as Error;
    }
  }
  return new Error('no cgroup2 mounted');
}

describe('cgroup', () => {
  let dir: string | Error;
  beforeAll(() => {
    dir = makeCgroup();
    if (dir instanceof Error) console.log(`skipped: cgroup placement, no writable cgroup v2 here (${dir.message})`);
  });
  afterAll(() => {
    if (typeof dir === 'string') rmdirSync(dir);
  });

  it.each(Object.entries(paths))('the child runs in the cgroup from its first instruction (%s)', async (_name, run) => {
    if (typeof dir !== 'string') return;
    const out = await run('/bin/cat', ['/proc/self/cgroup'], { cgroup: dir });
    expect(out).toContain(`0::/${path.basename(dir)}\n`);
  });

  // The child joins the cgroup before execve while the thread that started
  // it waits for that execve: in a frozen cgroup it would wait for ever.
  it('a frozen cgroup, or one another user could freeze (it or one above): refused before any child exists', async () => {
    if (typeof dir !== 'string') return;
    const inner = path.join(dir, 'inner');
    mkdirSync(inner);
    const freeze = (d: string, v: string) => writeFileSync(path.join(d, 'cgroup.freeze'), v);
    try {
      freeze(inner, '1');
      const t = performance.now();
      expect(() => spawn('/bin/true', [], { cgroup: inner })).toThrow(/EBUSY: the cgroup is frozen/);
      await expect(execFile('/bin/true', [], { cgroup: inner })).rejects.toMatchObject({ code: 'EBUSY', step: 'cgroup' });
      // A parent frozen freezes the child cgroup too.
      freeze(inner, '0');
      freeze(dir, '1');
      await expect(execFile('/bin/true', [], { cgroup: inner })).rejects.toMatchObject({ code: 'EBUSY', step: 'cgroup' });
      freeze(dir, '0');
      expect(performance.now() - t).toBeLessThan(2000);
      // Delegated to nobody: nobody could freeze it between our check and the child's execve.
      for (const owner of [inner, dir]) {
        chownSync(path.join(owner, 'cgroup.freeze'), NOBODY, NOBODY);
        const err = await execFile('/bin/true', [], { cgroup: inner }).catch((e: unknown) => e);
        expect(err).toMatchObject({ code: 'EPERM', step: 'cgroup' });
        expect((err as Error).message).toContain('another user could freeze');
        chownSync(path.join(owner, 'cgroup.freeze'), 0, 0);
      }
      expect((await execFile('/bin/cat', ['/proc/self/cgroup'], { cgroup: inner })).stdout).toContain(`/${path.basename(dir)}/inner\n`);
    } finally {
      freeze(dir, '0');
      rmdirSync(inner);
    }
  });

  it('a directory that is not a cgroup v2 one, or none: SpawnError at cgroup, nothing runs', async () => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-cg-'));
    const marker = path.join(tmp, 'ran');
    // A FIFO planted as cgroup.procs is never opened (an open for writing would wait for a reader).
    execFileSync('mkfifo', [path.join(tmp, 'cgroup.procs')]);
    try {
      for (const [cgroup, code] of [[tmp, 'ENOTSUP'], [path.join(tmp, 'missing'), 'ENOENT']] as const) {
        const err = await execFile('/bin/touch', [marker], { cgroup }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(SpawnError);
        expect(err).toMatchObject({ code, step: 'cgroup' });
        expect((err as Error).message).toContain(JSON.stringify(cgroup));
        expect(() => spawn('/bin/touch', [marker], { cgroup })).toThrow(SpawnError);
      }
      expect(existsSync(marker)).toBe(false);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('limits that cannot be applied fail the spawn; the program never runs', () => {
  it('nofile above fs.nr_open: EPERM at setrlimit', async () => {
    const hard = Number(readFileSync('/proc/sys/fs/nr_open', 'utf8'));
    const err = await execFile('/bin/true', [], { rlimits: { nofile: hard + 1 } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'SpawnError', code: 'EPERM', step: 'setrlimit' });
  });

  it('a soft limit above the inherited hard one: EINVAL at setrlimit', async () => {
    const hard = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max processes'))!.trim().split(/ +/)[3];
    if (hard === 'unlimited') return;
    const err = await execFile('/bin/true', [], { rlimits: { nproc: { soft: Number(hard) + 1 } } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'SpawnError', code: 'EINVAL', step: 'setrlimit' });
  });

  it('runCheck reports a limit that cannot be set as UNKNOWN naming the step', async () => {
    const r = await runCheck(['/bin/true'], { cgroup: '/' + 'nonexistent-cgroup' });
    expect(r.state).toBe(3);
    expect(r.spawnError).toBe('ENOENT');
    expect(r.output).toContain('cgroup');
  });

  it('bad options are TypeErrors and RangeErrors before anything runs', () => {
    const bad: Array<[SpawnOptions, RegExp]> = [
      [{ rlimits: { nofil: 1 } as Rlimits }, /unknown limit "nofil" \(known: as, core, cpu/],
      [{ rlimits: { nofile: -1 } }, /rlimits.nofile must be a whole number/],
      [{ rlimits: { nofile: 1.5 } }, /whole number/],
      [{ rlimits: { nofile: '64M' } }, /rlimits.nofile must be a whole number ≥ 0, Infinity or 'unlimited', got string 64M/],
      [{ rlimits: { as: '64X' } }, /or a size like '64M'/],
      [{ rlimits: { cpu: '1500ms' } }, /whole seconds/],
      [{ rlimits: { nofile: { soft: 10, hard: 5 } } }, /soft limit 10 is above the hard limit 5/],
      [{ rlimits: { nofile: { soft: 'unlimited', hard: 5 } } }, /soft limit unlimited is above the hard limit 5/],
      [{ rlimits: { nofile: { soft: 1, max: 2 } as never } }, /unknown key "max"/],
      [{ rlimits: { nofile: {} } }, /needs soft, hard or both/],
      [{ rlimits: [] as never }, /rlimits must be an object/],
      [{ nice: 20 }, /nice must be a whole number from -20 to 19, got number 20/],
      [{ nice: '5' as never }, /nice must be/],
      [{ cgroup: 'relative/dir' }, /cgroup must be the absolute path/],
      [{ cgroup: '/a\0b' }, /cgroup must be the absolute path/],
      [{ detached: 'yes' as never }, /detached must be a boolean/],
      [{ cleanup: 1 as never }, /cleanup must be a boolean/],
      [{ detached: true, processGroup: false }, /leads its own process group/],
      [{ method: 'posix_spawn', nice: 1 }, /'posix_spawn' cannot set nice/],
      [{ method: 'posix_spawn', cleanup: true }, /'posix_spawn' cannot set cleanup/],
      [{ method: 'posix_spawn', rlimits: { core: 0 } }, /'posix_spawn' cannot set rlimits/],
      [{ method: 'posix_spawn', cgroup: '/sys/fs/cgroup' }, /'posix_spawn' cannot set a cgroup/],
    ];
    for (const [options, message] of bad) {
      expect(() => spawn('/bin/true', [], options), JSON.stringify(options)).toThrow(message);
    }
  });

  it('each option is read once: a getter that changes its answer cannot set a flag without its value', async () => {
    let reads = 0;
    const options = { stdin: 'ignore', get nice() { return reads++ < 1 ? 10 : undefined; } } as SpawnOptions;
    const r = await execFile('/bin/sh', ['-c', 'nice'], options);
    expect(r.stdout.trim()).toBe('10');
    expect(reads).toBe(1);
  });

  it('posix_spawn by name does take detached (POSIX_SPAWN_SETSID)', async () => {
    const out = await viaSpawn('/bin/sh', ['-c', 'cat /proc/$$/stat'], { method: 'posix_spawn', detached: true });
    const stat = statFields(out.trim());
    expect(stat[2]).toBe(stat[3]);
  });
});

describe('the command line form of --rlimit', () => {
  it('reads NAME=VALUE lists and SOFT:HARD pairs', () => {
    expect(parseRlimitsText('nofile=512:4096,as=512M,core=0')).toEqual({ nofile: { soft: '512', hard: '4096' }, as: '512M', core: '0' });
    expect(() => parseRlimitsText('nofile')).toThrow(/NAME=VALUE/);
    expect(() => parseRlimitsText('nofile=1,nofile=2')).toThrow(/given twice/);
    expect(() => parseRlimitsText('nofile=2:1')).toThrow(/above the hard limit/);
  });

  it('a 1 MiB hostile value is refused in linear time', () => {
    const text = `nofile=${'9'.repeat(1 << 20)}x`;
    const t0 = performance.now();
    expect(() => parseRlimitsText(text)).toThrow(TypeError);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
