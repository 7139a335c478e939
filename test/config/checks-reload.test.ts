// Applying a reloaded checks file to a runner (issue 19): thousands of checks
// changed, added and removed in one pass, in slices that let the event loop
// run between them; unchanged checks are not touched (they keep their next
// run, attempt and state); a bad definition anywhere changes nothing.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CheckRunner, type CheckDefinition } from '../../src/check/runner/runner';
import { definitionHash } from '../../src/config/checks-digest';
import { AppliedChecks } from '../../src/config/checks-reload';
import { sameDefinition } from '../../src/config/same-definition';

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

  it('by key: a definition left out must be one the runner holds under that key; anything else is a TypeError, and nothing changes', async () => {
    const runner = new RecordingRunner();
    const applied = new AppliedChecks(runner);
    const keys = (defs: CheckDefinition[], who = '{}') => ({ ids: defs.map((d) => d.id), hashes: defs.map(definitionHash), who: defs.map(() => who) });
    const first = [def(1), def(2), def(3)];
    applied.apply({ ...keys(first), defs: first });
    runner.reset();
    const cases: [string, Parameters<AppliedChecks['apply']>[0], RegExp][] = [
      ['a new id', { ...keys([def(1), def(4)]), defs: [undefined, undefined] }, /no definition of id "c4", which is new/],
      ['a changed definition', { ...keys([def(1), def(2, 2)]), defs: [undefined, undefined] }, /no definition of id "c2", whose key changed/],
      ['another identity', { ...keys([def(1)], '{"uid":5}'), defs: [undefined] }, /no definition of id "c1", whose key changed/],
      ['a definition of another id', { ...keys([def(1), def(2)]), defs: [undefined, def(3)] }, /checks\[1\] is not the definition of id "c2"/],
      ['no key: every definition is needed', { ids: ['c1'], hashes: [NaN], who: ['{}'], defs: [undefined] }, /no definition of id "c1", whose key changed/],
    ];
    for (const [what, given, error] of cases) {
      expect(() => applied.apply(given), what).toThrow(error);
      await expect(applied.applyInSlices(given, () => false, 0), what).rejects.toThrow(TypeError);
    }
    expect(runner.added).toEqual([]);
    expect(runner.removed).toEqual([]);
    // A definition given under its applied key is still compared: the key stands in only for one left out.
    expect(() => applied.apply({ ...keys(first), defs: [def(1), { ...def(2), interval: -1 }, def(3)] })).toThrow(TypeError);
    // No hash (NaN: a definition with a null value in its text): compared in full each time, and never applied by key.
    const unhashed = { ...keys(first), hashes: [NaN, NaN, NaN] };
    expect([...await applied.wanted(unhashed)]).toEqual([0, 1, 2]);
    expect(applied.apply({ ...unhashed, defs: first })).toEqual({ added: [], removed: [], changed: [], unchanged: 3 });
    expect([...await applied.wanted(unhashed)]).toEqual([0, 1, 2]);
    expect(() => applied.apply({ ...unhashed, defs: [undefined, def(2), def(3)] })).toThrow(/no definition of id "c1", whose key changed/);
    expect(runner.added).toEqual([]);
    expect(runner.removed).toEqual([]);
    applied.apply({ ...keys(first), defs: first });
    // Unchanged by key: no definition needed, and none compared.
    expect(await applied.wanted(keys(first))).toEqual(new Uint32Array());
    expect(applied.apply({ ...keys(first), defs: [undefined, undefined, undefined] })).toEqual({ added: [], removed: [], changed: [], unchanged: 3 });
    // A change, an addition and a removal by key: only theirs are needed.
    const next = [def(4), def(1), def(2, 2)];
    expect([...await applied.wanted(keys(next))]).toEqual([0, 2]);
    expect(applied.apply({ ...keys(next), defs: [def(4), undefined, def(2, 2)] })).toEqual({ added: ['c4'], removed: ['c3'], changed: ['c2'], unchanged: 1 });
    expect(runner.removed).toEqual(['c3', 'c2']);
    expect(runner.added).toEqual(['c4', 'c2']);
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

  it('any sequence of reloads, by definitions or by key: the summary and the runner a plain model of the rule gives', async () => {
    // A check of a file: one of 8 ids, one of 3 versions, its keys in one of two orders; run as one of two identities.
    const arbDef = fc.record({ i: fc.integer({ min: 0, max: 7 }), v: fc.integer({ min: 0, max: 2 }), reversed: fc.boolean(), uid: fc.boolean() })
      .map(({ i, v, reversed, uid }): [CheckDefinition, number | undefined] => {
        const d = def(i, v);
        return [reversed ? { timeout: d.timeout, interval: d.interval, command: d.command, id: d.id } : d, uid ? 1 : undefined];
      });
    const arbFile = fc.record({ checks: fc.array(arbDef, { maxLength: 10 }), keyed: fc.boolean(), sliced: fc.boolean() });
    await fc.assert(fc.asyncProperty(fc.array(arbFile, { minLength: 1, maxLength: 8 }), async (files) => {
      const runner = new RecordingRunner();
      const applied = new AppliedChecks(runner);
      const model = new Map<string, CheckDefinition>();
      for (const { checks, keyed, sliced } of files) {
        runner.reset();
        // As the CLI makes them: the file's definition with its identity; the key, its hash and the identity's text.
        const defs = checks.map(([d, uid]) => (uid === undefined ? d : { ...d, uid }));
        const keys = { ids: defs.map((d) => d.id), hashes: checks.map(([d]) => definitionHash(d)), who: checks.map(([, uid]) => JSON.stringify({ uid })) };
        // By key: the definitions an apply needs, the others left out.
        const want = keyed ? new Set(await applied.wanted(keys)) : null;
        const given = want === null ? defs : { ...keys, defs: defs.map((d, k) => (want.has(k) ? d : undefined)) };
        const apply = () => (sliced ? applied.applyInSlices(given, () => false, 0) : Promise.resolve().then(() => applied.apply(given)));
        const dup = defs.find((d, k) => defs.findIndex((e) => e.id === d.id) !== k);
        if (dup !== undefined) {
          await expect(apply()).rejects.toThrow(`two checks with id "${dup.id}"`);
          expect(runner.added).toEqual([]);
          expect(runner.removed).toEqual([]);
          continue;
        }
        // Every check the runner holds under the key it is given again is left out.
        if (want !== null) for (let k = 0; k < defs.length; k++) if (!model.has(defs[k].id)) expect(want.has(k)).toBe(true);
        const next = new Map(defs.map((d) => [d.id, d]));
        const expected = {
          added: defs.filter((d) => !model.has(d.id)).map((d) => d.id),
          removed: [...model.keys()].filter((id) => !next.has(id)),
          changed: defs.filter((d) => model.has(d.id) && !sameDefinition(model.get(d.id), d)).map((d) => d.id),
          unchanged: defs.filter((d) => model.has(d.id) && sameDefinition(model.get(d.id), d)).length,
        };
        expect(await apply()).toEqual(expected);
        expect(runner.removed).toEqual([...expected.removed, ...expected.changed]);
        expect(runner.added).toEqual(defs.filter((d) => !model.has(d.id) || !sameDefinition(model.get(d.id), d)).map((d) => d.id));
        // Ids in the order first applied (what `removed` lists in); an unchanged check keeps its first definition.
        for (const id of expected.removed) model.delete(id);
        for (const d of defs) if (!model.has(d.id) || !sameDefinition(model.get(d.id), d)) model.set(d.id, d);
        expect(new Map(runner.checkStatus().map((st) => [st.id, [st.definition.command, st.definition.uid]])))
          .toEqual(new Map([...model].map(([id, d]) => [id, [d.command, d.uid]])));
        // Applied by key, each check is known by it now: the same file again needs no definition at all; applied by definitions, every one.
        expect((await applied.wanted(keys)).length).toBe(keyed ? 0 : defs.length);
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
