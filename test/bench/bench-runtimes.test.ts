// Other runtimes as rows of `noshell bench` (src/bench/spawn/runtimes.ts,
// bench/runtime-loop.mjs, bench-args.ts): each runtime's own spawn API runs the
// workload in its own process and reports what the in-process drivers do.
// Bun and Deno come from NOSHELL_TEST_BUN / NOSHELL_TEST_DENO (CI fetches the
// registry's @oven/bun-linux-x64 and @deno/linux-x64-glibc: .ci/runtimes).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../src/bench/spawn/bench-args';
import { plan, REFERENCE } from '../../src/bench/spawn/plan';
import { labelRuntimes, measureRuntime, probeRuntime, runtimeDrivers, type RuntimeKind } from '../../src/bench/spawn/runtimes';
import { runBench } from '../../src/bench/spawn/run';

const ROOT = path.resolve(__dirname, '..', '..');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-bench-runtimes-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A Bun or Deno binary from the environment; absent, the test says "skipped" (CI fails instead). */
function peer(kind: RuntimeKind): string | null {
  const file = process.env[kind === 'bun' ? 'NOSHELL_TEST_BUN' : 'NOSHELL_TEST_DENO'];
  if (file !== undefined && file !== '') return file;
  const why = `${kind}: set NOSHELL_TEST_${kind.toUpperCase()} to a ${kind} binary (.ci/runtimes fetch)`;
  if (process.env.NOSHELL_REQUIRE_PEERS === '1') throw new Error(`required peer missing: ${why}`);
  console.warn(`skipped: ${why}`);
  return null;
}

const TRUE = { id: 'true', argv: ['/bin/true'] };
const ECHO = { id: 'echo', argv: ['/bin/echo', 'hello'] };

describe('bench arguments', () => {
  const usage = 'noshell bench …';
  it('reads the filters, rounds and runtimes, in order', () => {
    const a = parseBenchArgs(['--workloads', 'true,plugin,true', '--concurrency', '1,64', '--heaps', 'small,1024', '--rounds', '5',
      '--bun', 'b', '--node', 'n1', '--deno', 'd', '--node', 'n2', '--no-loop-delay', '--seconds', '0.5'], usage);
    expect(a).toMatchObject({
      workloads: ['true', 'plugin'], concurrency: [1, 64], heaps: [0, 1024], rounds: 5, seconds: 0.5, loopDelay: false, quick: false,
      runtimes: [{ kind: 'bun', path: 'b' }, { kind: 'node', path: 'n1' }, { kind: 'deno', path: 'd' }, { kind: 'node', path: 'n2' }],
    });
    expect(parseBenchArgs([], usage)).toEqual({ quick: false, runtimes: [], loopDelay: true, load: false });
    expect(parseBenchArgs(['--load'], usage).load).toBe(true);
  });

  it('refuses what no table has, and values that are not numbers, naming the option', () => {
    expect(() => parseBenchArgs(['--workloads', 'truee'], usage)).toThrow(/--workloads: "truee" is not one of true, echo/);
    expect(() => parseBenchArgs(['--concurrency', '8'], usage)).toThrow(/--concurrency: "8" is not one of 1, 16, 64/);
    expect(() => parseBenchArgs(['--concurrency', '1e1'], usage)).toThrow(TypeError);
    expect(() => parseBenchArgs(['--heaps', '512'], usage)).toThrow(/--heaps: "512"/);
    expect(() => parseBenchArgs(['--rounds', '0'], usage)).toThrow(/--rounds needs a whole number from 1 to 1000/);
    expect(() => parseBenchArgs(['--rounds', '2.5'], usage)).toThrow(TypeError);
    expect(() => parseBenchArgs(['--seconds', 'NaN'], usage)).toThrow(/--seconds/);
    expect(() => parseBenchArgs(['--seconds', '1e-9'], usage)).toThrow(/--seconds needs a number of seconds from 0.05 to 3600/);
    expect(() => parseBenchArgs(['--bun'], usage)).toThrow(/--bun needs the path of a bun binary/);
    // An option where a value should be is not taken as one.
    expect(() => parseBenchArgs(['--node', '--quick'], usage)).toThrow(/--node needs the path of a node binary/);
    expect(() => parseBenchArgs(['--out', '--quick'], usage)).toThrow(/--out needs a directory/);
    expect(() => parseBenchArgs(['--workloads'], usage)).toThrow(/--workloads needs a value/);
    expect(() => parseBenchArgs(['--frobnicate'], usage)).toThrow(/unknown argument "--frobnicate"\nusage: noshell bench/);
    // Linear in the input, and the message stays short.
    const long = 'x'.repeat(1 << 20);
    expect(() => parseBenchArgs(['--workloads', long], usage)).toThrow(/^noshell bench: --workloads: "x{40}" is not one of/);
  });
});

describe('bench plan with other runtimes and filters', () => {
  const all = new Set(['true', 'echo', 'plugin', 'check_dummy', 'check_load', 'sh_plugin']);
  it('adds the runtime rows to every table after the in-process drivers, and keeps only the tables asked for', () => {
    const extra = ['bun 1.4.5: Bun.spawn', 'node 24.22.3: noshell.execFile'];
    const steps = plan(false, new Set(['true']), true, (d) => d !== 'cp.spawnSync', { extra, concurrency: new Set([1, 64]), heaps: new Set([0, 1024]) });
    const tables = steps.flatMap((s) => s.tables);
    expect(tables.map((t) => `${t.concurrency}/${t.heapMiB}`)).toEqual(['1/0', '64/0', '1/1024']);
    for (const t of tables) {
      expect(t.drivers[0]).toBe(REFERENCE);
      expect(t.drivers.slice(-2)).toEqual(extra);
    }
    expect(plan(false, all, true, () => true, { heaps: new Set([256]), concurrency: new Set([16]) })).toEqual([]);
  });
});

describe('runtime rows', () => {
  it('probes a binary: what it is and its version; refuses one that is something else or cannot run', () => {
    const node = probeRuntime('node', process.execPath);
    expect(node).toEqual({ kind: 'node', path: process.execPath, version: process.versions.node });
    // Garbage, a JSON null and a version no table can print are refusals that name the option.
    const liar = path.join(tmp, 'liar');
    for (const said of ['null', '"node"', '{"name":"node","version":"1|2"}', '{"name":"node","version":"24.0.0"}']) {
      writeFileSync(liar, `#!/bin/sh\necho '${said}'\n`, { mode: 0o755 });
      expect(() => probeRuntime('node', liar), said).toThrow(/^noshell bench --node ".*liar": /);
    }
    expect(runtimeDrivers(node).map((d) => d.id)).toEqual([`node ${process.versions.node}: noshell.execFile`, `node ${process.versions.node}: cp.execFile`]);
    expect(() => probeRuntime('bun', process.execPath)).toThrow(/--bun ".*": that binary is not bun \(it ran the loop as "node"\)/);
    expect(() => probeRuntime('deno', path.join(tmp, 'missing'))).toThrow(/--deno ".*missing": ENOENT/);
    const script = path.join(tmp, 'fake-node');
    writeFileSync(script, '#!/bin/sh\necho "not json"\n');
    chmodSync(script, 0o644);
    expect(() => probeRuntime('node', script)).toThrow(/EACCES/);
    chmodSync(script, 0o755);
    expect(() => probeRuntime('node', script)).toThrow(/could not run .*runtime-loop\.mjs/);
  });

  it('two runtimes of one kind and version keep rows of their own, told apart by their paths; one binary twice is one', () => {
    const a = { kind: 'node' as const, path: '/opt/a/node', version: '24.22.3' };
    const b = { kind: 'node' as const, path: '/opt/b/node', version: '24.22.3' };
    const c = { kind: 'bun' as const, path: '/opt/bun', version: '1.4.5' };
    const labelled = labelRuntimes([a, b, c, a]);
    expect(labelled.map((r) => r.label)).toEqual(['node 24.22.3 (/opt/a/node)', 'node 24.22.3 (/opt/b/node)', 'bun 1.4.5']);
    const ids = labelled.flatMap(runtimeDrivers).map((d) => d.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(labelled.flatMap(runtimeDrivers).find((d) => d.id === 'node 24.22.3 (/opt/b/node): noshell.execFile')!.runtime.path).toBe('/opt/b/node');
  });

  it('the loop stops at once when the benchmark that started it is gone', () => {
    const config = JSON.stringify({ api: 'cp.execFile', seconds: 30, concurrency: 1, heapMiB: 0, argv: ['/bin/true'], loopDelay: false, parent: 1 });
    const started = Date.now();
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bench', 'runtime-loop.mjs'), config], { encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(2);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('measures noshell and child_process under another Node: real spawns, their CPU, the blocked time', async () => {
    const node = probeRuntime('node', process.execPath);
    for (const d of runtimeDrivers(node)) {
      const m = await measureRuntime(d, ECHO, 4, 16, 0.2, true);
      expect(m.driver).toBe(d.id);
      expect(m).toMatchObject({ workload: 'echo', concurrency: 4, heapMiB: 16 });
      expect(m.spawns).toBeGreaterThan(10);
      // The window asked for (0.2 s), not the warm-up or the start of the runtime.
      expect(m.seconds).toBeGreaterThanOrEqual(0.2);
      expect(m.seconds).toBeLessThan(1.5);
      expect(m.parentCpuMsPer1k).toBeGreaterThan(0);
      expect(m.blockedP50Ms).toBeGreaterThan(0);
      expect(m.blockedP99Ms).toBeGreaterThanOrEqual(m.blockedP50Ms!);
      expect(m.loopDelayMaxMs).not.toBeNull();
    }
    const quiet = await measureRuntime(runtimeDrivers(node)[0], TRUE, 1, 0, 0.1, false);
    expect(quiet.loopDelayP50Ms).toBeNull();
  });

  it('a failing command fails the row with the runtime\'s own error', async () => {
    const node = probeRuntime('node', process.execPath);
    await expect(measureRuntime(runtimeDrivers(node)[0], { id: 'false', argv: ['/bin/false'] }, 1, 0, 0.1, false)).rejects.toThrow(/exit(ed)? .*1|code 1/i);
  });

  for (const kind of ['bun', 'deno'] as const) {
    it(`${kind}: its own spawn API, one at a time and 8 in flight, with 64 MiB held`, async (ctx) => {
      const file = peer(kind);
      if (file === null) return ctx.skip();
      const rt = probeRuntime(kind, file);
      expect(rt.version).toMatch(/^\d+\.\d+\.\d+/);
      const [d] = runtimeDrivers(rt);
      expect(d.id).toBe(`${kind} ${rt.version}: ${kind === 'bun' ? 'Bun.spawn' : 'Deno.Command'}`);
      for (const [concurrency, heap] of [[1, 0], [8, 64]]) {
        const m = await measureRuntime(d, ECHO, concurrency, heap, 0.2, true);
        expect(m.spawns).toBeGreaterThan(10);
        expect(m.parentCpuMsPer1k).toBeGreaterThan(0);
        expect(m.childCpuMsPer1k).toBeGreaterThanOrEqual(0);
        expect(m.blockedP50Ms).toBeGreaterThan(0);
        expect(m.loopDelayP99Ms).not.toBeNull();
      }
      await expect(measureRuntime(d, { id: 'false', argv: ['/bin/false'] }, 1, 0, 0.1, false)).rejects.toThrow(/exit 1/);
    }, 60_000);
  }

  it('runBench puts the rows in the tables asked for, measured in the same rounds', async () => {
    const node = probeRuntime('node', process.execPath);
    let text = '';
    const results = await runBench({
      quick: true, seconds: 0.1, rounds: 2, workloads: ['true'], concurrency: [1], heaps: [0], runtimes: [node], loopDelay: false,
      outDir: path.join(tmp, 'out'), out: (s) => { text += s; }, progress: { write: () => true },
    });
    const ids = results.map((r) => r.driver);
    expect(ids).toEqual(expect.arrayContaining([`node ${node.version}: noshell.execFile`, `node ${node.version}: cp.execFile`, 'noshell.execFile']));
    expect(new Set(results.map((r) => `${r.workload}|${r.concurrency}|${r.heapMiB}`))).toEqual(new Set(['true|1|0']));
    for (const r of results) expect(r.roundsPerSec).toHaveLength(2);
    expect(text).toContain(`- runtime: node ${node.version} (${process.execPath}), its own process per round`);
    expect(text).toContain('no loop-delay timer (--no-loop-delay)');
    await expect(runBench({ quick: true, heaps: [256], out: () => {}, outDir: path.join(tmp, 'out'), progress: { write: () => true } }))
      .rejects.toThrow(/no table of the quick matrix has that workload, concurrency and heap here/);
  }, 60_000);
});
