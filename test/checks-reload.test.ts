// Applying a reloaded checks file to a runner (issue 19): thousands of checks
// changed, added and removed in one pass, in slices that let the event loop
// run between them; unchanged checks are not touched (they keep their next
// run, attempt and state); a bad definition anywhere changes nothing.
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckRunner, type CheckDefinition } from '../src/check/runner';
import { AppliedChecks, sameDefinition } from '../src/cli/checks-reload';

/** A runner that records what the reload asked of it. */
class RecordingRunner extends CheckRunner {
  added: string[] = [];
  removed: string[] = [];
  override add(def: CheckDefinition): this {
    this.added.push(def.id);
    return super.add(def);
  }
  override remove(id: string): boolean {
    this.removed.push(id);
    return super.remove(id);
  }
  reset(): void {
    this.added = [];
    this.removed = [];
  }
}

const def = (i: number, v = 1): CheckDefinition => ({ id: `c${i}`, command: ['/bin/echo', `v${v}`], interval: 3_600_000, timeout: 1000 + v });

function ids(runner: CheckRunner): string[] {
  return runner.checkStatus().map((s) => s.id).sort();
}

describe('AppliedChecks: a reload of thousands of checks', () => {
  it('touches only what changed, in slices with the event loop running between them', async () => {
    const runner = new RecordingRunner();
    const applied = new AppliedChecks(runner);
    const first = Array.from({ length: 6000 }, (_, i) => def(i));
    expect(applied.apply(first)).toMatchObject({ added: expect.any(Array), removed: [], changed: [], unchanged: 0 });
    runner.start();
    runner.reset();
    // 0-499 changed, 500-799 removed, 6000-6399 added, the rest unchanged.
    const next = [
      ...Array.from({ length: 500 }, (_, i) => def(i, 2)),
      ...Array.from({ length: 5200 }, (_, i) => def(800 + i)),
      ...Array.from({ length: 400 }, (_, i) => def(6000 + i)),
    ];
    const before = new Map(runner.checkStatus().map((s) => [s.id, s.definition]));
    let ticks = 0;
    // Between slices the apply is seen as under way (noshell run holds its warm passes meanwhile).
    let applyingSeen = 0;
    expect(applied.applying).toBe(false);
    const ticker = setInterval(() => {
      ticks++;
      if (applied.applying) applyingSeen++;
    }, 0);
    const summary = await applied.applyInSlices(next, () => false, 0);
    clearInterval(ticker);
    expect(applied.applying).toBe(false);
    expect(applyingSeen).toBe(ticks);
    expect(summary.changed).toHaveLength(500);
    expect(summary.removed).toHaveLength(300);
    expect(summary.added).toHaveLength(400);
    expect(summary.unchanged).toBe(5200);
    expect(runner.removed.sort()).toEqual([...summary.changed, ...summary.removed].sort());
    expect(runner.added.sort()).toEqual([...summary.changed, ...summary.added].sort());
    expect(ids(runner)).toEqual(next.map((d) => d.id).sort());
    // Unchanged checks are the same entries: their definition objects were not replaced.
    const after = new Map(runner.checkStatus().map((s) => [s.id, s.definition]));
    for (let i = 800; i < 6000; i++) expect(after.get(`c${i}`)).toBe(before.get(`c${i}`));
    for (let i = 0; i < 500; i++) expect(after.get(`c${i}`)!.timeout).toBe(1002);
    // Slices of at most 32 steps here (sliceMs 0): timers ran while it applied.
    expect(ticks).toBeGreaterThan(10);
    await runner.stop();
  });

  it('gives the same runner as apply() at once', async () => {
    const defs = Array.from({ length: 3000 }, (_, i) => def(i, i % 3));
    const reloaded = Array.from({ length: 3000 }, (_, i) => def(i + 1000, i % 5));
    const a = new CheckRunner();
    const b = new CheckRunner();
    const appliedA = new AppliedChecks(a);
    const appliedB = new AppliedChecks(b);
    appliedA.apply(defs);
    await appliedB.applyInSlices(defs, () => false, 0);
    expect(appliedA.apply(reloaded)).toEqual(await appliedB.applyInSlices(reloaded, () => false, 0));
    const defsOf = (r: CheckRunner) => r.checkStatus().map((s) => s.definition).sort((x, y) => x.id.localeCompare(y.id));
    expect(defsOf(b)).toEqual(defsOf(a));
  });

  it('a bad definition anywhere changes nothing, sliced or not', async () => {
    const runner = new CheckRunner();
    const applied = new AppliedChecks(runner);
    applied.apply(Array.from({ length: 100 }, (_, i) => def(i)));
    const bad = [...Array.from({ length: 5000 }, (_, i) => def(i, 2)), { id: 'bad', command: ['/bin/true'], interval: -1 }];
    await expect(applied.applyInSlices(bad, () => false, 0)).rejects.toThrow(TypeError);
    expect(applied.applying).toBe(false);
    expect(() => applied.apply(bad)).toThrow(TypeError);
    expect(ids(runner)).toEqual(Array.from({ length: 100 }, (_, i) => `c${i}`).sort());
    expect(runner.checkStatus().every((s) => (s.definition.command as string[])[1] === 'v1')).toBe(true);
  });

  it('two checks with one id in a file are a TypeError, and nothing changes', () => {
    const runner = new CheckRunner();
    const applied = new AppliedChecks(runner);
    applied.apply([def(1), def(2)]);
    expect(() => applied.apply([def(1, 2), def(3), def(3, 2)])).toThrow(/two checks with id "c3"/);
    expect(ids(runner)).toEqual(['c1', 'c2']);
  });

  it('an id given twice that the runner already holds is a TypeError too, and nothing changes', async () => {
    const runner = new RecordingRunner();
    const applied = new AppliedChecks(runner);
    applied.apply([def(1), def(2)]);
    runner.reset();
    expect(() => applied.apply([def(1), def(2, 2), def(1, 3)])).toThrow(/two checks with id "c1"/);
    await expect(applied.applyInSlices([def(2), def(1, 2), def(2, 3)], () => false, 0)).rejects.toThrow(/two checks with id "c2"/);
    expect(runner.added).toEqual([]);
    expect(runner.removed).toEqual([]);
    // The refused applies left no mark: the next one sees c1 and c2 as they are.
    expect(applied.apply([def(2), def(1)])).toEqual({ added: [], removed: [], changed: [], unchanged: 2 });
  });

  it('refuses an apply while a sliced one is under way, which then ends as it would have', async () => {
    const runner = new CheckRunner();
    const applied = new AppliedChecks(runner);
    applied.apply(Array.from({ length: 200 }, (_, i) => def(i)));
    const sliced = applied.applyInSlices(Array.from({ length: 200 }, (_, i) => def(i, 2)), () => false, 0);
    expect(applied.applying).toBe(true);
    expect(() => applied.apply([def(1)])).toThrow(/another apply is under way/);
    await expect(applied.applyInSlices([def(1)])).rejects.toThrow(/another apply is under way/);
    const summary = await sliced;
    expect(summary.changed).toHaveLength(200);
    expect(runner.checkStatus().every((s) => (s.definition.command as string[])[1] === 'v2')).toBe(true);
  });

  it('any sequence of reloads: the summary and the runner a plain model of the rule gives', () => {
    // A definition: one of 8 ids, one of 3 versions, its keys in one of two orders.
    const arbDef = fc.record({ i: fc.integer({ min: 0, max: 7 }), v: fc.integer({ min: 0, max: 2 }), reversed: fc.boolean() })
      .map(({ i, v, reversed }): CheckDefinition => {
        const d = def(i, v);
        return reversed ? { timeout: d.timeout, interval: d.interval, command: d.command, id: d.id } : d;
      });
    fc.assert(fc.property(fc.array(fc.array(arbDef, { maxLength: 10 }), { minLength: 1, maxLength: 8 }), (files) => {
      const runner = new RecordingRunner();
      const applied = new AppliedChecks(runner);
      const model = new Map<string, CheckDefinition>();
      for (const defs of files) {
        runner.reset();
        const dup = defs.find((d, k) => defs.findIndex((e) => e.id === d.id) !== k);
        if (dup !== undefined) {
          expect(() => applied.apply(defs)).toThrow(`two checks with id "${dup.id}"`);
          expect(runner.added).toEqual([]);
          expect(runner.removed).toEqual([]);
          continue;
        }
        const next = new Map(defs.map((d) => [d.id, d]));
        const expected = {
          added: defs.filter((d) => !model.has(d.id)).map((d) => d.id),
          removed: [...model.keys()].filter((id) => !next.has(id)),
          changed: defs.filter((d) => model.has(d.id) && !sameDefinition(model.get(d.id), d)).map((d) => d.id),
          unchanged: defs.filter((d) => model.has(d.id) && sameDefinition(model.get(d.id), d)).length,
        };
        expect(applied.apply(defs)).toEqual(expected);
        expect(runner.removed).toEqual([...expected.removed, ...expected.changed]);
        expect(runner.added).toEqual(defs.filter((d) => !model.has(d.id) || !sameDefinition(model.get(d.id), d)).map((d) => d.id));
        // Ids in the order first applied (what `removed` lists in); an unchanged check keeps its first definition.
        for (const id of expected.removed) model.delete(id);
        for (const d of defs) if (!model.has(d.id) || !sameDefinition(model.get(d.id), d)) model.set(d.id, d);
        expect(new Map(runner.checkStatus().map((s) => [s.id, s.definition.command]))).toEqual(new Map([...model].map(([id, d]) => [id, d.command])));
      }
    }), { numRuns: 300 });
  });

  it('a definition is unchanged whatever its key order and undefined keys; any changed value is a change', () => {
    const a = { id: 'x', command: ['/bin/echo', 'a'], interval: 60_000, timeout: 10_000, env: { A: '1', B: '2' }, groups: [1, 2] };
    const same = [
      { interval: 60_000, groups: [1, 2], env: { B: '2', A: '1' }, timeout: 10_000, command: ['/bin/echo', 'a'], id: 'x' },
      { ...a, retryInterval: undefined, env: { A: '1', B: '2', C: undefined } },
      { ...a, timeout: 10_000.0 },
    ];
    for (const b of same) {
      expect(sameDefinition(a, b)).toBe(true);
      expect(sameDefinition(b, a)).toBe(true);
    }
    const changed: object[] = [
      { ...a, timeout: 10_001 }, { ...a, timeout: '10000' }, { ...a, command: ['/bin/echo', 'a', ''] }, { ...a, command: '/bin/echo a' },
      { ...a, env: { A: '1' } }, { ...a, env: { A: '1', B: '2', C: '' } }, { ...a, groups: [2, 1] }, { ...a, groups: { 0: 1, 1: 2 } },
      { ...a, retryInterval: 1000 }, { ...a, env: null }, { ...a, user: 'nobody' },
    ];
    for (const b of changed) {
      expect(sameDefinition(a, b)).toBe(false);
      expect(sameDefinition(b, a)).toBe(false);
    }
    // As many keys, not the same ones: an undefined key on one side does not stand for a defined one on the other.
    expect(sameDefinition({ v: 1, w: undefined }, { v: 1, x: 5 })).toBe(false);
    expect(sameDefinition({ v: 1, x: 5 }, { v: 1, w: undefined })).toBe(false);
    expect(sameDefinition({ v: 1, w: undefined }, { v: 1, x: undefined })).toBe(true);
    // Numbers by their text, as a JSON-like comparison would: NaN is NaN, -0 is 0.
    expect(sameDefinition({ v: NaN }, { v: NaN })).toBe(true);
    expect(sameDefinition({ v: -0 }, { v: 0 })).toBe(true);
  });

  it('a reload of an equal definition written in another key order keeps the check as it is', () => {
    const runner = new RecordingRunner();
    const applied = new AppliedChecks(runner);
    applied.apply([{ id: 'k', command: ['/bin/true'], interval: 60_000, timeout: 5000 }]);
    runner.reset();
    const summary = applied.apply([{ timeout: 5000, interval: 60_000, command: ['/bin/true'], id: 'k' }]);
    expect(summary).toEqual({ added: [], removed: [], changed: [], unchanged: 1 });
    expect(runner.added).toEqual([]);
    expect(runner.removed).toEqual([]);
  });

  it('stops between slices when the runner is stopping', async () => {
    const runner = new RecordingRunner();
    const applied = new AppliedChecks(runner);
    let slices = 0;
    const summary = await applied.applyInSlices(Array.from({ length: 5000 }, (_, i) => def(i)), () => ++slices > 400, 0);
    // Validation and diffing took the first slices; some checks were added, not all.
    expect(runner.added.length).toBeGreaterThan(0);
    expect(runner.added.length).toBeLessThan(5000);
    expect(summary.added).toEqual(runner.added);
  });
});

describe('loadChecksFileOffThread (what a reload uses)', () => {
  // The compiled module: its worker is the compiled checks-file-worker.js beside it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { loadChecksFileOffThread } = require('../dist/cli/checks-file-thread.js') as typeof import('../src/cli/checks-file-thread');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { loadChecksFile } = require('../dist/cli/checks-file.js') as typeof import('../src/cli/checks-file');
  // Made in beforeAll: a run that skips this block (a -t filter) runs neither hook, and left the directory.
  let tmp = '';
  beforeAll(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-offthread-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('answers a process that has nothing else to do, which then exits on its own', () => {
    const file = path.join(tmp, 'alone.json');
    writeFileSync(file, JSON.stringify({ checks: [{ id: 'a', command: '/bin/true', interval: '1m' }] }));
    const lib = path.join(__dirname, '..', 'dist', 'cli', 'checks-file-thread.js');
    const r = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(lib)}).loadChecksFileOffThread(${JSON.stringify(file)})
      .then((f) => console.log(f.checks.length), (e) => console.log('error', e.message))`], { encoding: 'utf8', timeout: 30_000 });
    // An unref'd loading thread let the process exit with the promise pending: no output at all.
    expect(r.stdout).toBe('1\n');
    expect(r.status).toBe(0);
  });

  // 2,000 checks a message, two sent ahead: none, exactly one or two batches, three and a part, in order.
  it('gives what loadChecksFile gives, and its TypeError, from a worker thread', async () => {
    expect(existsSync(path.join(__dirname, '..', 'dist', 'cli', 'checks-file-worker.js'))).toBe(true);
    const good = path.join(tmp, 'good.json');
    for (const n of [0, 2000, 4000, 6500]) {
      writeFileSync(good, JSON.stringify({ macros: { USER1: '/usr/lib/nagios/plugins' }, defaults: { interval: '1m' },
        checks: Array.from({ length: n }, (_, i) => ({ id: `c${i}`, command: '$USER1$/check_dummy 0 $ARG1$', args: [`n${i}`] })) }));
      const off = await loadChecksFileOffThread(good);
      expect(off.checks).toHaveLength(n);
      expect(off).toEqual(loadChecksFile(good));
    }
    const bad = path.join(tmp, 'bad.yaml');
    writeFileSync(bad, 'checks: []\nchecks: []\n');
    const err = await loadChecksFileOffThread(bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe(`${bad}: invalid YAML:\n  line 2, column 1: map keys must be unique`);
    const missing = await loadChecksFileOffThread(path.join(tmp, 'none.json')).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(TypeError);
    expect((missing as Error).message).toMatch(/none\.json: cannot read/);
  });
});
