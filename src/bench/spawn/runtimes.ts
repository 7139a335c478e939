// Other runtimes as rows of `noshell bench`: a Bun, Deno or Node binary given
// on the command line runs bench/runtime-loop.mjs, that runtime's own spawn API
// (or noshell under that Node) on the same workload, concurrency and held heap,
// in the same rounds as the C loops and the in-process drivers.
import { execFile, execFileSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Measurement } from './measure';

export type RuntimeKind = 'bun' | 'deno' | 'node';

export interface Runtime {
  kind: RuntimeKind;
  /** The binary, absolute. */
  path: string;
  /** What the binary says it is: 1.4.5, 2.9.6, 24.22.3. */
  version: string;
  /** How its rows are named: "bun 1.4.5", with the path when two runtimes would share it. */
  label?: string;
}

/** A row of a runtime: the driver id the tables print, and the API the loop calls. */
export interface RuntimeDriver {
  id: string;
  runtime: Runtime;
  api: 'Bun.spawn' | 'Deno.Command' | 'noshell.execFile' | 'cp.execFile';
}

const root = path.resolve(__dirname, '..', '..', '..');
const LOOP = path.join(root, 'bench', 'runtime-loop.mjs');
/** noshell itself, loaded by another Node: this package's build. */
const NOSHELL = path.join(root, 'dist', 'index.js');

/** How the runtime runs a script (Deno: every permission, as node and bun have). */
function scriptArgs(rt: Runtime, config: object): string[] {
  const json = JSON.stringify(config);
  return rt.kind === 'deno' ? ['run', '--allow-all', '--quiet', '--no-config', LOOP, json] : [LOOP, json];
}

/**
 * Checks the binary and asks it what it is (by running the loop's 'version'
 * call: a binary that cannot run the loop fails here, not minutes later).
 * Throws a TypeError that names the option.
 */
export function probeRuntime(kind: RuntimeKind, file: string): Runtime {
  const abs = path.resolve(file);
  try {
    if (!statSync(abs).isFile()) throw new Error('not a regular file');
    accessSync(abs, constants.X_OK);
  } catch (err) {
    throw new TypeError(`noshell bench --${kind} ${JSON.stringify(file)}: ${(err as Error).message}`, { cause: err });
  }
  let said: unknown;
  try {
    // A Node also loads noshell itself, as its rows will: a missing build fails here.
    const out = execFileSync(abs, scriptArgs({ kind, path: abs, version: '' }, { api: 'version', ...(kind === 'node' ? { noshell: NOSHELL } : {}) }), {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000, maxBuffer: 1 << 20,
    });
    said = JSON.parse(out.trim());
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    const detail = (e.stderr ?? '').trim().split('\n').slice(-3).join(' ').slice(0, 500) || e.message;
    throw new TypeError(`noshell bench --${kind} ${JSON.stringify(file)}: it could not run ${LOOP}: ${detail}`, { cause: err });
  }
  const got = typeof said === 'object' && said !== null ? said as { name?: unknown; version?: unknown; noshell?: unknown } : {};
  if (got.name !== kind) {
    throw new TypeError(`noshell bench --${kind} ${JSON.stringify(file)}: that binary is not ${kind} (it ran the loop as ${JSON.stringify(got.name ?? null)?.slice(0, 20)})`);
  }
  if (kind === 'node' && got.noshell !== true) {
    throw new TypeError(`noshell bench --node ${JSON.stringify(file)}: that Node does not load noshell's ${NOSHELL}`);
  }
  if (typeof got.version !== 'string' || !isVersion(got.version)) {
    throw new TypeError(`noshell bench --${kind} ${JSON.stringify(file)}: it gave no version this table can print`);
  }
  return { kind, path: abs, version: got.version };
}

/** 1.4.5, 24.22.3, 2.9.6-rc.1+build: digits, letters, dots, dashes and pluses, 40 at most. */
function isVersion(v: string): boolean {
  if (v.length === 0 || v.length > 40) return false;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    const ok = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 46 || c === 45 || c === 43;
    if (!ok) return false;
  }
  return true;
}

/**
 * Names each runtime's rows: "bun 1.4.5"; two of one kind and version (two
 * builds, a wrapper) are told apart by their paths, so no row takes another's.
 */
export function labelRuntimes(runtimes: readonly Runtime[]): Runtime[] {
  const base = (r: Runtime) => `${r.kind} ${r.version}`;
  const count = new Map<string, number>();
  for (const r of runtimes) count.set(base(r), (count.get(base(r)) ?? 0) + 1);
  const seen = new Set<string>();
  const out: Runtime[] = [];
  for (const r of runtimes) {
    const label = count.get(base(r))! > 1 ? `${base(r)} (${r.path})` : base(r);
    // The same binary given twice is measured once.
    if (seen.has(label)) continue;
    seen.add(label);
    out.push({ ...r, label });
  }
  return out;
}

/** The rows a runtime adds to every table: its own API, and for Node noshell and child_process under that Node. */
export function runtimeDrivers(rt: Runtime): RuntimeDriver[] {
  const label = rt.label ?? `${rt.kind} ${rt.version}`;
  const row = (api: RuntimeDriver['api']): RuntimeDriver => ({ id: `${label}: ${api}`, runtime: rt, api });
  if (rt.kind === 'bun') return [row('Bun.spawn')];
  if (rt.kind === 'deno') return [row('Deno.Command')];
  return [row('noshell.execFile'), row('cp.execFile')];
}

interface LoopResult {
  spawns: number;
  seconds: number;
  selfCpuMs: number;
  childCpuMs: number;
  blocked: { p50: number | null; p99: number | null; max: number | null };
  loopDelay: { p50: number | null; p99: number | null; max: number | null };
}

/** One measurement of a runtime's row: a fresh process of that runtime per round. */
export async function measureRuntime(
  d: RuntimeDriver, workload: { id: string; argv: string[] }, concurrency: number, heapMiB: number, seconds: number, loopDelay: boolean,
): Promise<Measurement> {
  // parent: the loop leaves as soon as this process is gone (a benchmark killed outright).
  const config = { api: d.api, seconds, concurrency, heapMiB, argv: workload.argv, noshell: NOSHELL, loopDelay, parent: process.pid };
  const { stdout } = await promisify(execFile)(d.runtime.path, scriptArgs(d.runtime, config), {
    encoding: 'utf8', maxBuffer: 1 << 20, timeout: (seconds + 120) * 1000,
  });
  let r: LoopResult;
  try {
    r = JSON.parse(stdout.trim().split('\n').pop() ?? '') as LoopResult;
    if (typeof r.seconds !== 'number' || typeof r.selfCpuMs !== 'number' || typeof r.blocked !== 'object' || typeof r.loopDelay !== 'object') {
      throw new TypeError('a result without its fields');
    }
  } catch (err) {
    throw new Error(`${d.id} on ${workload.id}: the loop printed no result (${(err as Error).message}): ${JSON.stringify(stdout.slice(-200))}`, { cause: err });
  }
  if (!(r.spawns > 0)) throw new Error(`${d.id} on ${workload.id}: no operation completed`);
  return {
    driver: d.id,
    workload: workload.id,
    concurrency,
    heapMiB,
    spawns: r.spawns,
    seconds: r.seconds,
    spawnsPerSec: r.spawns / r.seconds,
    parentCpuMsPer1k: (r.selfCpuMs / r.spawns) * 1000,
    childCpuMsPer1k: (r.childCpuMs / r.spawns) * 1000,
    blockedP50Ms: r.blocked.p50,
    blockedP99Ms: r.blocked.p99,
    blockedMaxMs: r.blocked.max,
    loopDelayP50Ms: r.loopDelay.p50,
    loopDelayP99Ms: r.loopDelay.p99,
    loopDelayMaxMs: r.loopDelay.max,
    roundsPerSec: [],
  };
}
