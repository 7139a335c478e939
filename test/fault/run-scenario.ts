// Runs one fault scenario (test/fault/<name>.mjs) in a Node process of its
// own and reads back its JSON summary; the shared assertions on it.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { unprivilegedTree } from '../unprivileged';

const FAULT = __dirname;
export const BIN = path.resolve(__dirname, '..', 'fixtures', 'bin');
// RLIMIT_NPROC is not enforced for root: those scenarios drop to a uid of
// their own, which no other test or scenario uses and no passwd entry
// names. The limit counts every process and thread of the uid on the
// machine: as nobody, the processes other suites run as nobody at the same
// time counted against it (with 50 nobody processes here the worker
// scenario died by SIGABRT). runScenario waits until the uid has no process
// left before it starts one. Such a scenario also runs with its working
// directory in the world-readable copy: the worker scenario's eval'd worker
// resolves require() from the working directory, and Node 22 and later
// fail on a parent directory they may not read (a fresh-clone CI run in a
// mktemp directory, Node 24 and 26: "Cannot read package config
// /tmp/ci9.l6rt/package.json: permission denied", exit 1; Node 20 passes).
export const FAULT_UIDS = { eagain: 64990, workerEagain: 64991 } as const;
export function asFaultUser(uid: number): string[] {
  return process.getuid?.() === 0 ? ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups'] : [];
}

/** pids whose real uid is `uid`. */
function processesOf(uid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      const at = status.indexOf('\nUid:');
      if (at >= 0 && Number.parseInt(status.slice(at + 5).trimStart(), 10) === uid) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function noProcessesOf(uid: number, ms: number): Promise<void> {
  const end = Date.now() + ms;
  for (let left = processesOf(uid); left.length > 0; left = processesOf(uid)) {
    if (Date.now() > end) throw new Error(`processes of uid ${uid} still there after ${ms} ms: ${left.join(' ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  summary: any;
}

/**
 * Runs `prefix… node test/fault/<name>.mjs` in its own process group, with
 * `env` over ours minus the addon's NOSHELL_* switches (read once at load: a
 * scenario gets only those it asks for); kills the group if it outlives `ms`.
 */
export async function runScenario(
  name: string, prefix: string[] = [], env: Record<string, string> = {}, ms = 30_000,
): Promise<Outcome> {
  const reuid = prefix.find((a) => a.startsWith('--reuid='));
  if (reuid !== undefined) await noProcessesOf(Number(reuid.slice('--reuid='.length)), 10_000);
  // As nobody, from a world-readable copy: the checkout may sit in a 0700
  // directory (a CI clone in a mktemp dir, say).
  const dir = prefix.includes('setpriv') ? path.join(unprivilegedTree(), 'test', 'fault') : FAULT;
  const argv = [...prefix, process.execPath, path.join(dir, `${name}.mjs`)];
  const childEnv: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(childEnv)) if (k.startsWith('NOSHELL_')) delete childEnv[k];
  Object.assign(childEnv, env);
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: dir, detached: true, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const guard = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), ms);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      // Nothing the scenario started may outlive it in its group.
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // ESRCH: the group is empty, as it should be
      }
      const last = stdout.trim().split('\n').pop() ?? '';
      let summary: unknown = null;
      try {
        summary = JSON.parse(last);
      } catch {
        // no summary: the assertions below say what came out instead
      }
      resolve({ code, signal, stderr, summary });
    });
  });
}

/** The scenario exited 0 after its summary, and came back to its baseline. */
export function expectSurvivedClean(o: Outcome): void {
  // Whole in the log: the assertion's diff shows only its first lines.
  if (o.code !== 0 || o.signal !== null) console.error(`scenario exited ${o.code ?? o.signal}; its stderr:\n${o.stderr.slice(0, 4000)}`);
  expect({ code: o.code, signal: o.signal, stderr: o.stderr.slice(-2000) }).toEqual({ code: 0, signal: null, stderr: expect.any(String) });
  expect(o.summary?.hung).toBeUndefined();
  const { baseline, after } = o.summary;
  expect(after.fds).toBe(baseline.fds);
  expect(after.threads).toBe(baseline.threads);
  expect(after.children).toEqual([]);
  expect(after.laterExec).toBe('after\n');
}

export function spawnError(code: string, step: string, file: string) {
  return expect.objectContaining({ name: 'SpawnError', code, step, syscall: `spawn ${file}`, path: file });
}
