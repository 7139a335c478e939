// The loading thread of a reload (checks-file-thread.ts): it answers with the
// file's digest first, then copies only the checks asked for; a stop
// terminates it at once; it never keeps a process alive that is done.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// The compiled modules: the worker is the compiled checks-file-worker.js beside them.
/* eslint-disable @typescript-eslint/no-require-imports */
const { loadChecksFileOffThread, openChecksFileOffThread, LoadAborted } =
  require('../../dist/config/checks-file-thread.js') as typeof import('../../src/config/checks-file-thread');
const { loadChecksFile } = require('../../dist/config/checks-file.js') as typeof import('../../src/config/checks-file');
const { digestChecks } = require('../../dist/config/checks-digest.js') as typeof import('../../src/config/checks-digest');
const { StaleKnown } = require('../../dist/config/checks-known.js') as typeof import('../../src/config/checks-known');
/* eslint-enable @typescript-eslint/no-require-imports */
const LIB = path.join(__dirname, '..', '..', 'dist', 'config', 'checks-file-thread.js');

// Made in beforeAll: a run that skips this file's tests (a -t filter) runs neither hook.
let tmp = '';
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-offthread-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** `n` checks, every third with a user, every fifth with a group. */
function writeChecks(name: string, n: number): string {
  const file = path.join(tmp, name);
  writeFileSync(file, JSON.stringify({ macros: { USER1: '/usr/lib/nagios/plugins' }, defaults: { interval: '1m' },
    checks: Array.from({ length: n }, (_, i) => ({
      id: `c${i}`, command: '$USER1$/check_dummy 0 $ARG1$', args: [`n${i}`],
      ...(i % 3 === 0 ? { user: 'nobody' } : {}), ...(i % 5 === 0 ? { group: 'nogroup' } : {}),
    })) }));
  return file;
}

/** Runs `code` (with `lib` the compiled module) in a new process: what it prints, and whether it exited on its own. */
function inProcess(code: string): { stdout: string; status: number | null } {
  const r = spawnSync(process.execPath, ['-e', `const lib = require(${JSON.stringify(LIB)});\n${code}`], { encoding: 'utf8', timeout: 30_000 });
  return { stdout: r.stdout + r.stderr, status: r.status };
}

describe('the loading thread of a reload', () => {
  it('answers a process that has nothing else to do, which then exits on its own', () => {
    const file = path.join(tmp, 'alone.json');
    writeFileSync(file, JSON.stringify({ checks: [{ id: 'a', command: '/bin/true', interval: '1m' }] }));
    // An unref'd loading thread let the process exit with the promise pending: no output at all.
    expect(inProcess(`lib.loadChecksFileOffThread(${JSON.stringify(file)}).then((f) => console.log(f.checks.length), (e) => console.log('error', e.message))`))
      .toEqual({ stdout: '1\n', status: 0 });
    // A source opened and dropped, never fetched from nor closed: the process still exits.
    expect(inProcess(`lib.openChecksFileOffThread(${JSON.stringify(file)}).then((s) => console.log(s.digest.ids.join()), (e) => console.log('error', e.message))`))
      .toEqual({ stdout: 'a\n', status: 0 });
  });

  // 1,000 checks a message, two sent ahead: none, exactly one or two batches, three and a part, in order.
  it('gives what loadChecksFile gives, and its TypeError, from a worker thread', async () => {
    expect(existsSync(path.join(__dirname, '..', '..', 'dist', 'config', 'checks-file-worker.js'))).toBe(true);
    for (const n of [0, 1000, 2000, 3500]) {
      const good = writeChecks(`good-${n}.json`, n);
      const off = await loadChecksFileOffThread(good);
      expect(off.checks).toHaveLength(n);
      expect(off).toEqual(loadChecksFile(good));
    }
    const bad = path.join(tmp, 'bad.yaml');
    writeFileSync(bad, 'checks: []\nchecks: []\n');
    const err = await loadChecksFileOffThread(bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe(`${bad}: invalid YAML:\n  line 2, column 1: map keys must be unique`);
    const missing = await openChecksFileOffThread(path.join(tmp, 'none.json')).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(TypeError);
    expect((missing as Error).message).toMatch(/none\.json: cannot read/);
  });

  it('the digest first (ids over several messages), then only the checks asked for, once', async () => {
    const file = writeChecks('digest.json', 25_001);
    const local = loadChecksFile(file);
    const source = await openChecksFileOffThread(file);
    try {
      const want = digestChecks(local.checks);
      expect(source.digest.ids).toEqual(want.ids);
      expect([...source.digest.hashes]).toEqual([...want.hashes]);
      expect(source.digest.pairs).toEqual([
        { user: 'nobody', group: 'nogroup' }, { user: undefined, group: undefined }, { user: 'nobody', group: undefined }, { user: undefined, group: 'nogroup' },
      ]);
      expect([...source.digest.pairOf]).toEqual([...want.pairOf]);
      expect({ runner: source.runner, metrics: source.metrics }).toEqual({ runner: local.runner, metrics: local.metrics });
      const indexes = [0, 1, 999, 1000, 1001, 2000, 12_345, 25_000];
      expect(await source.fetch(Uint32Array.from(indexes))).toEqual(indexes.map((i) => local.checks[i]));
      await expect(source.fetch(Uint32Array.of(0))).rejects.toThrow('fetch: once per source');
    } finally {
      source.close();
    }
    // Nothing asked for: nothing copied, and the answer still comes.
    const none = await openChecksFileOffThread(file);
    expect(await none.fetch(new Uint32Array())).toEqual([]);
    none.close();
    // Indexes the digest did not give are refused, not read past the end.
    for (const bad of [[25_001], [5, 5], [7, 3]]) {
      const s = await openChecksFileOffThread(file);
      await expect(s.fetch(Uint32Array.from(bad))).rejects.toThrow(/^fetch: bad index/);
      s.close();
    }
  });

  it('knowing the last load: skips the checks it had, and gives them, expanded, when asked for', async () => {
    const first = await openChecksFileOffThread(writeChecks('known-1.json', 5000));
    const known = first.known;
    expect(first.skipped).toBe(0);
    first.close();
    // The same checks with 5 changed, in a file of another name.
    const file = path.join(tmp, 'known-2.json');
    writeFileSync(file, JSON.stringify({ macros: { USER1: '/usr/lib/nagios/plugins' }, defaults: { interval: '1m' },
      checks: Array.from({ length: 5000 }, (_, i) => ({
        id: `c${i}`, command: '$USER1$/check_dummy 0 $ARG1$', args: [i % 1000 === 7 ? 'changed' : `n${i}`],
        ...(i % 3 === 0 ? { user: 'nobody' } : {}), ...(i % 5 === 0 ? { group: 'nogroup' } : {}),
      })) }));
    const local = loadChecksFile(file);
    const want = digestChecks(local.checks);
    const source = await openChecksFileOffThread(file, undefined, known);
    try {
      expect(source.skipped).toBe(4995);
      expect(source.digest.ids).toEqual(want.ids);
      expect([...source.digest.hashes]).toEqual([...want.hashes]);
      expect([...source.digest.pairOf]).toEqual([...want.pairOf]);
      expect(source.digest.pairs).toEqual(want.pairs);
      // Known ones (0, 1, 4999) and changed ones (7, 1007), expanded on the thread as they are asked for.
      const indexes = [0, 1, 7, 1007, 4999];
      expect(await source.fetch(Uint32Array.from(indexes))).toEqual(indexes.map((i) => local.checks[i]));
      // What the next load goes by is this file's.
      expect([...source.known.defs]).toEqual([...want.hashes]);
      expect(source.known.raw).toHaveLength(5000);
    } finally {
      source.close();
    }
    // A known check that does not expand to the hash it was known by: the fetch rejects with StaleKnown.
    const stale = await openChecksFileOffThread(file, undefined, { ...source.known, defs: source.known.defs.map((d, i) => (i === 3 ? d + 1 : d)) });
    try {
      expect(stale.skipped).toBe(5000);
      const err = await stale.fetch(Uint32Array.of(2, 3)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StaleKnown);
      expect((err as Error).message).toBe(`${file}: checks[3] (id "c3"): its text has the hash of a check of the last load but is not that check`);
    } finally {
      stale.close();
    }
  });

  it('ids of 100 KB and 20,000 distinct user/group pairs come whole, in messages bounded by size', async () => {
    const file = path.join(tmp, 'big-ids.json');
    const ids = Array.from({ length: 40 }, (_, i) => `${String.fromCharCode(0x61 + (i % 26)).repeat(100_000)}${i}`);
    writeFileSync(file, JSON.stringify({ defaults: { interval: '1m' }, checks: [
      ...ids.map((id) => ({ id, command: '/bin/true' })),
      ...Array.from({ length: 20_000 }, (_, i) => ({ id: `p${i}`, command: '/bin/true', user: String(100_000 + i), group: String(i) })),
    ] }));
    const source = await openChecksFileOffThread(file);
    try {
      expect(source.digest.ids.slice(0, 40)).toEqual(ids);
      expect(source.digest.pairs).toHaveLength(20_001);
      expect(source.digest.pairs[20_000]).toEqual({ user: '119999', group: '19999' });
      const checks = await source.fetch(Uint32Array.from({ length: 41 }, (_, i) => i));
      expect(checks.map((c) => c.definition.id)).toEqual([...ids, 'p0']);
    } finally {
      source.close();
    }
  });

  it('closed, or its signal aborted, before or during a fetch: the fetch rejects with LoadAborted', async () => {
    const file = writeChecks('abort.json', 20_000);
    const closed = await openChecksFileOffThread(file);
    closed.close();
    await expect(closed.fetch(Uint32Array.of(1))).rejects.toBeInstanceOf(LoadAborted);
    // At once, and after some of its 20 batches have come.
    for (const after of [0, 15]) {
      const stop = new AbortController();
      const source = await openChecksFileOffThread(file, stop.signal);
      const all = source.fetch(Uint32Array.from({ length: 20_000 }, (_, i) => i));
      if (after > 0) await new Promise((resolve) => setTimeout(resolve, after));
      stop.abort();
      await expect(all).rejects.toBeInstanceOf(LoadAborted);
    }
    // Aborted before it answered: the open itself rejects.
    const early = new AbortController();
    const opening = openChecksFileOffThread(file, early.signal);
    early.abort();
    await expect(opening).rejects.toBeInstanceOf(LoadAborted);
  });
});

describe('a reload by key (loadRunChecks with the checks applied)', () => {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { loadRunChecks } = require('../../dist/config/run-reload.js') as typeof import('../../src/config/run-reload');
  const { AppliedChecks } = require('../../dist/config/checks-reload.js') as typeof import('../../src/config/checks-reload');
  const { CheckRunner } = require('../../dist/check/runner/runner.js') as typeof import('../../src/check/runner/runner');
  /* eslint-enable @typescript-eslint/no-require-imports */

  /** A user database of one user, "alice", whose uid is `uid`; asked how often. */
  const database = (uid: number) => {
    const lookup = { asked: 0, resolve: (user: string | undefined, group: string | undefined) => {
      lookup.asked++;
      if (user === undefined && group === undefined) return Promise.resolve({});
      if (user !== 'alice' || group !== undefined) return Promise.reject(new TypeError(`user ${JSON.stringify(user)}: no such user (getent passwd)`));
      return Promise.resolve({ uid, gid: 100, groups: [100] });
    } };
    return lookup;
  };
  const write = (file: string, ids: number[], version: (i: number) => number) => writeFileSync(file, JSON.stringify({ defaults: { interval: '1h' },
    checks: ids.map((i) => ({ id: `c${i}`, command: ['/bin/echo', `v${version(i)}`], ...(i % 4 === 0 ? { user: 'alice' } : {}) })) }));
  const given = (c: { defs: readonly unknown[] }) => c.defs.filter((d) => d !== undefined).length;

  it('copies only the definitions whose hash or identity changed; the apply gives what a full one would', async () => {
    const file = path.join(tmp, 'keys.json');
    const range = (a: number, b: number) => Array.from({ length: b - a }, (_, k) => a + k);
    write(file, range(0, 3000), () => 1);
    const runner = new CheckRunner();
    const applied = new AppliedChecks(runner);
    const start = await loadRunChecks(file, true, { lookup: database(1001) });
    expect(given(start.checks)).toBe(3000);
    applied.apply(start.checks);
    const reload = async (lookup: ReturnType<typeof database>) => {
      const next = await loadRunChecks(file, true, { offThread: true, applied, lookup });
      // One lookup per (user, group) pair, at every reload: a changed user database is seen.
      expect(lookup.asked).toBe(2);
      return { copied: given(next.checks), summary: await applied.applyInSlices(next.checks, () => false, 0) };
    };
    // 30 changed, 5 removed, 5 added: 35 definitions copied of 3,000.
    write(file, [...range(5, 3000), ...range(3000, 3005)], (i) => (i >= 100 && i < 130 ? 2 : 1));
    let r = await reload(database(1001));
    expect(r.copied).toBe(35);
    expect(r.summary).toMatchObject({ added: range(3000, 3005).map((i) => `c${i}`), removed: range(0, 5).map((i) => `c${i}`), unchanged: 2965 });
    expect(r.summary.changed).toHaveLength(30);
    // The same file, alice's uid changed in the database: her checks (every fourth) are copied and changed, nothing else.
    r = await reload(database(1002));
    const alices = [...range(5, 3000), ...range(3000, 3005)].filter((i) => i % 4 === 0).length;
    expect(r.copied).toBe(alices);
    expect(r.summary.changed).toHaveLength(alices);
    expect(r.summary.unchanged).toBe(3000 - alices);
    expect(runner.checkStatus().filter((s) => s.definition.uid === 1002)).toHaveLength(alices);
    expect(runner.checkStatus().filter((s) => s.definition.uid === 1001)).toHaveLength(0);
    // Nothing changed: nothing copied.
    r = await reload(database(1002));
    expect(r).toEqual({ copied: 0, summary: { added: [], removed: [], changed: [], unchanged: 3000 } });
    // A lookup that fails names the checks, as at start; nothing changes.
    await expect(loadRunChecks(file, true, { offThread: true, applied, lookup: { resolve: (u: string | undefined) =>
      (u === undefined ? Promise.resolve({}) : Promise.reject(new TypeError(`user ${JSON.stringify(u)}: no such user (getent passwd)`))) } }))
      .rejects.toThrow(`${file}: invalid checks file:\n  checks[3] (id "c8"): field "user": user "alice": no such user (getent passwd)\n  checks[7] (id "c12")`);
    expect(runner.checkStatus()).toHaveLength(3000);
  });

  it('the same bytes again: the last load is taken as it was, unless an identity changed or a byte did', async () => {
    const file = path.join(tmp, 'same.json');
    const ids = Array.from({ length: 2000 }, (_, k) => k);
    write(file, ids, () => 1);
    const runner = new CheckRunner();
    const applied = new AppliedChecks(runner);
    const start = await loadRunChecks(file, true, { lookup: database(1001) });
    expect(start.known.file).toMatch(/^[0-9a-f]{64}$/);
    expect(start.unchanged).toBe(false);
    applied.apply(start.checks);
    const reload = async (last: typeof start, lookup: ReturnType<typeof database>) => {
      const next = await loadRunChecks(file, true, { offThread: true, applied, lookup, known: last.known, last: last.last });
      expect(lookup.asked).toBe(2);
      return next;
    };
    // Not parsed: the digest is the one kept here, and nothing is copied or to apply.
    const same = await reload(start, database(1001));
    expect(same.unchanged).toBe(true);
    expect(same.last.digest).toBe(start.last.digest);
    expect(same.known).toBe(start.known);
    expect(given(same.checks)).toBe(0);
    expect(same.checks.ids).toEqual(start.checks.ids);
    // The same bytes, alice's uid changed: her checks' definitions come from a load of the file now.
    const moved = await reload(same, database(1002));
    expect(moved.unchanged).toBe(false);
    const alices = ids.filter((i) => i % 4 === 0).length;
    expect(given(moved.checks)).toBe(alices);
    const summary = await applied.applyInSlices(moved.checks, () => false, 0);
    expect(summary.changed).toHaveLength(alices);
    expect(runner.checkStatus().filter((s) => s.definition.uid === 1002)).toHaveLength(alices);
    // One byte more (a space): parsed again, knowing the last load; the same checks, nothing copied.
    writeFileSync(file, `${readFileSync(file, 'utf8')} `);
    const spaced = await reload(moved, database(1002));
    expect(spaced.unchanged).toBe(false);
    expect(spaced.last.digest).not.toBe(moved.last.digest);
    expect(spaced.known.file).not.toBe(moved.known.file);
    expect(spaced.checks.ids).toEqual(moved.checks.ids);
    expect([...spaced.checks.hashes]).toEqual([...moved.checks.hashes]);
    expect(given(spaced.checks)).toBe(0);
    // Given a `last` that is not the load `known` came from, the bytes are not compared.
    const mismatched = await loadRunChecks(file, true, { offThread: true, applied, lookup: database(1002), known: spaced.known, last: moved.last });
    expect(mismatched.unchanged).toBe(false);
    // A check whose string spells a null (":null" in its text) has a hash like any other (only a null
    // value has none, and a valid file has none): its file's same bytes are taken as they were.
    const nulls = path.join(tmp, 'nulls.json');
    writeFileSync(nulls, JSON.stringify({ defaults: { interval: '1h' }, checks: [{ id: 'n', command: ['/bin/echo', 'a:null'] }, { id: 'm', command: '/bin/true' }] }));
    const nullApplied = new AppliedChecks(new CheckRunner());
    const first = await loadRunChecks(nulls, true);
    expect(Number.isNaN(first.checks.hashes[0])).toBe(false);
    nullApplied.apply(first.checks);
    const again = await loadRunChecks(nulls, true, { offThread: true, applied: nullApplied, known: first.known, last: first.last });
    expect(again.unchanged).toBe(true);
    expect(again.last.digest).toBe(first.last.digest);
    expect(given(again.checks)).toBe(0);
    // An invalid file is refused as always, and the load before it stays the one to compare with.
    writeFileSync(file, '{"checks": [');
    await expect(reload(spaced, database(1002))).rejects.toThrow(/invalid JSON/);
  });
});

describe('SIGHUP with the file as it was (onReload through the loading thread)', () => {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { loadRunChecks, onReload } = require('../../dist/config/run-reload.js') as typeof import('../../src/config/run-reload');
  const { AppliedChecks } = require('../../dist/config/checks-reload.js') as typeof import('../../src/config/checks-reload');
  const { CheckRunner } = require('../../dist/check/runner/runner.js') as typeof import('../../src/check/runner/runner');
  /* eslint-enable @typescript-eslint/no-require-imports */

  it('is reloaded with nothing parsed or applied; a changed byte is applied as always', async () => {
    const file = path.join(tmp, 'hup.json');
    const text = (v: number) => JSON.stringify({ defaults: { interval: '1h' },
      checks: Array.from({ length: 500 }, (_, i) => ({ id: `c${i}`, command: ['/bin/echo', `v${i === 7 ? v : 1}`] })) });
    writeFileSync(file, text(1));
    const runner = new CheckRunner();
    const applied = new AppliedChecks(runner);
    const start = await loadRunChecks(file, true);
    applied.apply(start.checks);
    let applies = 0;
    const apply = applied.applyInSlices.bind(applied);
    applied.applyInSlices = (...a) => {
      applies++;
      return apply(...a);
    };
    const lines: string[] = [];
    const reloads = onReload({ file, allowRoot: true, concurrency: undefined, fixedConcurrency: false, known: start.known, last: start.last },
      applied, () => false, (l) => lines.push(l));
    const reloaded = async (count: number) => {
      process.emit('SIGHUP', 'SIGHUP');
      await vi.waitFor(() => expect(lines.filter((l) => l.startsWith('noshell run: reload'))).toHaveLength(count), { timeout: 10_000 });
    };
    try {
      await reloaded(1);
      await reloaded(2);
      expect(applies).toBe(0);
      writeFileSync(file, text(2));
      await reloaded(3);
      expect(applies).toBe(1);
      // Then the bytes applied last are those: as they were again.
      await reloaded(4);
      expect(applies).toBe(1);
    } finally {
      reloads.remove();
    }
    const same = `noshell run: reloaded ${file}: 0 added, 0 removed, 0 changed, 500 unchanged\n`;
    expect(lines.filter((l) => l.startsWith('noshell run: reload'))).toEqual([
      same, same, `noshell run: reloaded ${file}: 0 added, 0 removed, 1 changed ("c7"), 499 unchanged\n`, same,
    ]);
    expect(runner.checkStatus().find((c) => c.definition.id === 'c7')?.definition.command).toEqual(['/bin/echo', 'v2']);
  });
});

describe('the last load again (unchangedSource)', () => {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { unchangedSource, localChecksSource } = require('../../dist/config/checks-source.js') as typeof import('../../src/config/checks-source');
  const { loadChecks } = require('../../dist/config/checks-file-load.js') as typeof import('../../src/config/checks-file-load');
  /* eslint-enable @typescript-eslint/no-require-imports */

  it('gives nothing without a load; asked for definitions, loads the file again and refuses bytes that changed', async () => {
    const file = path.join(tmp, 'unchanged.json');
    writeFileSync(file, JSON.stringify({ defaults: { interval: '1m' }, checks: [{ id: 'a', command: '/bin/true' }, { id: 'b', command: '/bin/false' }] }));
    const first = loadChecks(file, null);
    const last = { runner: first.runner, metrics: first.metrics, digest: first.digest, known: first.known };
    let reopened = 0;
    const reopen = () => {
      reopened++;
      return Promise.resolve(localChecksSource(loadChecks(file, first.known)));
    };
    let s = unchangedSource(file, last, reopen);
    expect(s.unchanged).toBe(true);
    expect(s.skipped).toBe(2);
    await expect(s.fetch(new Uint32Array(0))).resolves.toEqual([]);
    expect(reopened).toBe(0);
    await expect(s.fetch(new Uint32Array(0))).rejects.toThrow('once per source');
    s = unchangedSource(file, last, reopen);
    await expect(s.fetch(Uint32Array.of(2))).rejects.toThrow(/index/);
    s = unchangedSource(file, last, reopen);
    const got = await s.fetch(Uint32Array.of(1));
    expect(got.map((c) => c.definition.id)).toEqual(['b']);
    expect(reopened).toBe(1);
    // The file changed between: what the indexes meant is gone.
    writeFileSync(file, JSON.stringify({ defaults: { interval: '1m' }, checks: [{ id: 'b', command: '/bin/false' }, { id: 'a', command: '/bin/true' }] }));
    s = unchangedSource(file, last, reopen);
    await expect(s.fetch(Uint32Array.of(1))).rejects.toThrow(`${file}: it changed while it was being reloaded`);
    // Closed before: no load.
    s = unchangedSource(file, last, reopen);
    s.close();
    await expect(s.fetch(Uint32Array.of(0))).rejects.toThrow('load aborted');
    expect(reopened).toBe(2);
  });
});
