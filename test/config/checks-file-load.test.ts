// A load that knows the last load's checks (checks-file-load.ts): whatever
// the files, it gives what a load that knows nothing gives (the digest, each
// check's definition and user/group, the same TypeError word for word), and
// it skips the checks whose text and context it has seen.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CheckRunner } from '../../src/check/runner/runner';
import { loadChecks, type LoadedChecks } from '../../src/config/checks-file-load';
import { loadChecksFile } from '../../src/config/checks-file';
import { AppliedChecks } from '../../src/config/checks-reload';
import { knownDefinitions, StaleKnown, type KnownChecks } from '../../src/config/checks-known';
import { loadRunChecks, onReload } from '../../src/config/run-reload';

let tmp = '';
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-known-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let files = 0;
function write(data: unknown, ext = 'json'): string {
  const file = path.join(tmp, `f${files++}.${ext}`);
  writeFileSync(file, typeof data === 'string' ? data : JSON.stringify(data));
  return file;
}

type Outcome = { error: string } | { loaded: LoadedChecks };

function attempt(file: string, known: KnownChecks | null): Outcome {
  try {
    return { loaded: loadChecks(file, known) };
  } catch (e) {
    expect(e).toBeInstanceOf(TypeError);
    return { error: (e as Error).message };
  }
}

/** Everything a load gives, as plain data (every check expanded). */
function whole(l: LoadedChecks) {
  const n = l.digest.ids.length;
  return {
    runner: l.runner, metrics: l.metrics, ids: l.digest.ids, hashes: [...l.digest.hashes], pairs: l.digest.pairs,
    pairOf: [...l.digest.pairOf], checks: Array.from({ length: n }, (_, i) => l.check(i)),
    sizes: Array.from({ length: n }, (_, i) => l.size(i)),
    known: { context: l.known.context, raw: [...l.known.raw], defs: [...l.known.defs], file: l.known.file },
  };
}

// A small world, so that files share checks, ids collide, and contexts repeat.
const check = fc.record({
  id: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
  command: fc.constantFrom('$USER1$/check_dummy 0 $ARG1$', '/bin/true', ['$USER1$/x', '$ARG2$'], '$USER2$/y'),
  args: fc.option(fc.constantFrom(['p'], ['p', 'q']), { nil: undefined }),
  interval: fc.option(fc.constantFrom('1m', 500, 'never'), { nil: undefined }),
  user: fc.option(fc.constantFrom('nobody', 65534, 0, 'x y'), { nil: undefined }),
  group: fc.option(fc.constantFrom('nogroup', 7), { nil: undefined }),
  timeout: fc.option(fc.constantFrom('10s', 2000), { nil: undefined }),
}, { requiredKeys: ['id', 'command'] }).map((c) => JSON.parse(JSON.stringify(c)) as Record<string, unknown>);

const context = fc.record({
  defaults: fc.option(fc.record({
    interval: fc.option(fc.constantFrom('1m', '5s'), { nil: undefined }),
    user: fc.option(fc.constantFrom('nobody', 1000), { nil: undefined }),
    group: fc.option(fc.constantFrom('staff', 50), { nil: undefined }),
    timeout: fc.option(fc.constantFrom('3s'), { nil: undefined }),
  }), { nil: undefined }),
  macros: fc.option(fc.constantFrom({ USER1: '/usr/lib/nagios/plugins' }, { USER1: '/opt', USER2: '/srv' }), { nil: undefined }),
}).map((c) => JSON.parse(JSON.stringify(c)) as Record<string, unknown>);

describe('loadChecks knowing the last load', () => {
  it('any sequence of files: what a load knowing nothing gives, error or not; a file loaded again is skipped whole', () => {
    // Each file picks its checks from one pool (repeats too), so files share checks across contexts.
    fc.assert(fc.property(
      fc.array(check, { minLength: 1, maxLength: 8 }),
      fc.array(fc.record({ ctx: context, picks: fc.array(fc.nat(7), { maxLength: 8 }), again: fc.boolean() }), { minLength: 1, maxLength: 6 }),
      (pool, steps) => {
        let known: KnownChecks | null = null;
        let last: { text: string; n: number } | null = null;
        for (const step of steps) {
          const data = { ...step.ctx, checks: step.picks.map((k) => pool[k % pool.length]) };
          const text = JSON.stringify(data);
          const file = write(text);
          const fresh = attempt(file, null);
          const knowing = attempt(file, known);
          if ('error' in fresh) {
            expect(knowing).toEqual(fresh);
            continue;
          }
          expect('loaded' in knowing, JSON.stringify(knowing)).toBe(true);
          if (!('loaded' in knowing)) continue;
          expect(whole(knowing.loaded)).toEqual(whole(fresh.loaded));
          expect(fresh.loaded.skipped).toBe(0);
          // The same text again, same context: nothing to validate or expand.
          if (last !== null && last.text === text) expect(knowing.loaded.skipped).toBe(last.n);
          // And by the compiled path every caller takes.
          expect(whole(knowing.loaded).checks).toEqual(loadChecksFile(file).checks);
          known = knowing.loaded.known;
          last = { text, n: knowing.loaded.digest.ids.length };
          if (step.again) {
            const twice = attempt(write(text), known);
            expect('loaded' in twice && twice.loaded.skipped).toBe(last.n);
            if ('loaded' in twice) expect(whole(twice.loaded)).toEqual(whole(fresh.loaded));
          }
        }
      },
    ), { numRuns: 500 });
  });

  it('skips only the checks it knows, under the same defaults and macros', () => {
    const checks = Array.from({ length: 1000 }, (_, i) => ({ id: `c${i}`, command: '$USER1$/check_dummy 0 $ARG1$', args: [`v${i}`], user: i % 2 === 0 ? 'nobody' : 65534 }));
    const ctx = { defaults: { interval: '1m' }, macros: { USER1: '/usr/lib/nagios/plugins' } };
    const first = loadChecks(write({ ...ctx, checks }), null);
    expect(first.skipped).toBe(0);
    // 10 changed, 1 added, 1 removed.
    const next = checks.slice(1).map((c, i) => (i % 100 === 0 ? { ...c, args: ['changed'] } : c));
    next.push({ id: 'new', command: '/bin/true', args: [], user: 'nobody' });
    const again = loadChecks(write({ ...ctx, checks: next }), first.known);
    expect(again.skipped).toBe(999 - 10);
    expect(whole(again)).toEqual(whole(loadChecks(write({ ...ctx, checks: next }), null)));
    // A known check's user as a number comes out as the schema gives it: a string.
    expect(again.digest.pairs).toEqual([{ user: '65534', group: undefined }, { user: 'nobody', group: undefined }]);
    // Another default: every check is another definition, none is skipped.
    const other = loadChecks(write({ ...ctx, defaults: { interval: '2m' }, checks: next }), again.known);
    expect(other.skipped).toBe(0);
    expect(other.check(5).definition.interval).toBe(120_000);
    // Another macro value, the same.
    expect(loadChecks(write({ ...ctx, macros: { USER1: '/opt' }, checks: next }), again.known).skipped).toBe(0);
  });

  it('a known check given twice is still a duplicate id; a null in a string\'s text is text, a null value is never taken as known', () => {
    const c = { id: 'x', command: '/bin/true', interval: '1m' };
    const once = loadChecks(write({ checks: [c] }), null);
    const file = write({ checks: [c, c] });
    expect(() => loadChecks(file, once.known)).toThrow(`${file}: invalid checks file:\n  checks[1] (id "x"): field "id": the same id as checks[0]`);
    // `"x >/dev/null,null"` is a string: the check has its hash and is known at the next load; so are
    // the checks of a file whose macros and defaults spell a null (each was validated at every load before).
    const ctx = { macros: { USER1: '/usr/lib/nagios/plugins', USER2: 'a,null:[null' }, defaults: { interval: '1m', env: { X: '>/dev/null,null' } } };
    const checks = [c, { id: 'n', command: 'x >/dev/null,null', interval: '1m' }, { id: 'm', command: ['$USER1$/check_dummy', '0', '$USER2$'] }];
    const first = loadChecks(write({ ...ctx, checks }), null);
    expect(first.known.context).not.toBeNaN();
    expect(first.known.raw[1]).not.toBeNaN();
    const again = loadChecks(write({ ...ctx, checks }), first.known);
    expect(again.skipped).toBe(3);
    expect(whole(again)).toEqual(whole(first));
    expect(again.check(2).definition.command).toEqual(['/usr/lib/nagios/plugins/check_dummy', '0', 'a,null:[null']);
    expect(again.check(2).definition.env).toEqual({ X: '>/dev/null,null' });
    // A null value has no hash: such a check is validated at every load (here: refused every time, known or not).
    const bad = write({ checks: [c, { id: 'v', command: '/bin/true', timeout: null }] });
    const refused = attempt(bad, null);
    expect(refused).toHaveProperty('error');
    expect(attempt(bad, first.known)).toEqual(refused);
  });

  it('unkeyed (noshell run --check): the same checks, pairs and errors, nothing hashed and nothing taken as known', () => {
    const ctx = { macros: { USER1: '/usr/lib/nagios/plugins' }, defaults: { interval: '1m' } };
    const checks = Array.from({ length: 50 }, (_, i) => ({ id: `c${i}`, command: ['$USER1$/check_dummy', '0', `v${i}`], user: i % 2 === 0 ? 'nobody' : 65534 }));
    const file = write({ ...ctx, checks });
    const keyed = loadChecks(file, null);
    const unkeyed = loadChecks(file, keyed.known, undefined, false);
    expect(unkeyed.skipped).toBe(0);
    const a = whole(keyed);
    const b = whole(unkeyed);
    expect(b.hashes.every(Number.isNaN)).toBe(true);
    expect(b.known.raw.every(Number.isNaN)).toBe(true);
    expect(b.known.defs.every(Number.isNaN)).toBe(true);
    expect(a.hashes.some(Number.isNaN)).toBe(false);
    // Sizes come from the definitions when asked for.
    expect({ ...b, hashes: a.hashes, known: a.known }).toEqual(a);
    // The same refusal, word for word.
    const bad = write({ ...ctx, checks: [...checks, checks[3]] });
    expect(attempt(bad, null)).toEqual((() => {
      try {
        loadChecks(bad, null, undefined, false);
      } catch (e) {
        return { error: (e as Error).message };
      }
      return { loaded: null };
    })());
  });

  it('a known check that does not expand to the definition its hash stood for: StaleKnown when it is asked for', () => {
    const checks = [{ id: 'a', command: '/bin/true', interval: '1m' }, { id: 'b', command: '/bin/false', interval: '1m' }];
    const file = write({ checks });
    const first = loadChecks(file, null);
    // b's text known under another definition's hash (what two texts with one hash would give).
    const known = { ...first.known, defs: first.known.defs.map((d, i) => (i === 1 ? d + 1 : d)) };
    const next = loadChecks(file, known);
    expect(next.skipped).toBe(2);
    expect(next.check(0)).toEqual(first.check(0));
    let caught: unknown;
    try {
      next.check(1);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(StaleKnown);
    expect((caught as Error).message).toBe(`${file}: checks[1] (id "b"): its text has the hash of a check of the last load but is not that check`);
  });

  it('noshell run\'s reload goes by what the last load knew, and loads in full when that was stale', async () => {
    const file = write({ defaults: { interval: '1m' }, checks: [{ id: 'a', command: '/bin/true' }, { id: 'b', command: '/bin/false' }] });
    const runner = new CheckRunner();
    const applied = new AppliedChecks(runner);
    const start = await loadRunChecks(file, true);
    applied.apply(start.checks);
    // b known under a wrong definition hash: its key differs from the applied one's, so it is fetched, and found stale.
    const known = { ...start.known, defs: start.known.defs.map((d, i) => (i === 1 ? d + 1 : d)) };
    const lines: string[] = [];
    const reloads = onReload({ file, allowRoot: true, concurrency: undefined, fixedConcurrency: false, known }, applied, () => false, (l) => lines.push(l));
    const reloaded = async (count: number) => {
      process.emit('SIGHUP', 'SIGHUP');
      await vi.waitFor(() => expect(lines.filter((l) => l.startsWith('noshell run: reloaded'))).toHaveLength(count));
    };
    try {
      await reloaded(1);
      // Then it goes by the load that succeeded: nothing stale.
      await reloaded(2);
    } finally {
      reloads.remove();
    }
    const done = `noshell run: reloaded ${file}: 0 added, 0 removed, 0 changed, 2 unchanged\n`;
    expect(lines).toEqual([
      'noshell run: SIGHUP, reloading\n',
      `noshell run: reload of ${file}: ${file}: checks[1] (id "b"): its text has the hash of a check of the last load but is not that check; loading it again in full\n`,
      done, 'noshell run: SIGHUP, reloading\n', done,
    ]);
    expect(runner.checkStatus().map((c) => c.definition.command)).toEqual(['/bin/true', '/bin/false']);
  });

  it('maps raw hashes to definition hashes only for the same context, never NaN', () => {
    const known: KnownChecks = { context: 5, raw: new Float64Array([1, NaN, 2, 1]), defs: new Float64Array([10, 11, 12, 13]), file: '' };
    expect(knownDefinitions(known, 6)).toBeNull();
    expect(knownDefinitions(known, NaN)).toBeNull();
    expect(knownDefinitions(null, 5)).toBeNull();
    expect([...knownDefinitions(known, 5)!]).toEqual([[1, 10], [2, 12]]);
  });
});
