// Differential suite: generated pipelines, redirections and lists run by
// exec() without a shell and by /bin/sh -c (dash), each in a fresh directory
// with the same files: stdout, stderr, every file's contents and mode, and
// the status must be identical. The stages are real programs: ones that fill
// pipe buffers, fail, write to both streams and to fd 3, read closed stdin,
// and die of a signal.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { exec, parseCommand, type ExecResult } from '../../src/index';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'noshell-diff-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** Programs a stage runs: each writes what it writes before any SIGPIPE can cut it short. */
const PROGRAMS = [
  '/bin/cat',
  '/usr/bin/tr a-z A-Z',
  '/usr/bin/head -c 10',
  '/usr/bin/head -c 70000 /dev/zero',
  '/usr/bin/head -c 200000 /dev/zero',
  '/usr/bin/seq 1 30000',
  "/usr/bin/printf 'x%sy\\n' a b",
  '/usr/bin/wc -c',
  "/bin/sh -c 'echo err >&2; echo out; exit 3'",
  "/bin/sh -c 'echo err1 >&2; exit 1'",
  "/bin/sh -c 'echo three >&3'",
  '/bin/false',
  '/bin/true',
  '/bin/cat in',
  "/bin/sh -c 'kill -TERM $$'",
];
const KILLS = "/bin/sh -c 'kill -TERM $$'";
/**
 * What a later stage may be: programs that read all their input. One that
 * does not read it (input redirected, or a program that never reads) makes
 * the stage before it die of SIGPIPE or not, by timing: with dash as with us
 * (`wc -c <&- | cat <in` prints one or two errors either way).
 */
const READERS = new Set(['/bin/cat', '/usr/bin/tr a-z A-Z', '/usr/bin/wc -c', '/usr/bin/head -c 10']);
const INPUT_FORMS = ['<in', '0<>rw', '<&-'];
const FILES = ['o1', 'o2', 'e1', 'f3'];

interface StagePlan { program: string; redirects: string[] }
interface PipelinePlan { op: string; stages: StagePlan[] }

const redirect = fc.oneof(
  fc.constantFrom('2>&1', '1>&2', '<in', '0<>rw', '<&-', '2>&-', '3>&1'),
  fc.tuple(fc.constantFrom('>', '>>', '2>', '2>>', '3>', '>|'), fc.constantFrom(...FILES)).map(([op, f]) => `${op}${f}`),
);
const stage = fc.record({
  program: fc.constantFrom(...PROGRAMS),
  redirects: fc.array(redirect, { maxLength: 2 }),
});
const pipeline = fc.record({
  op: fc.constantFrom(';', '&&', '||'),
  stages: fc.array(stage, { minLength: 1, maxLength: 3 }),
});
const plan = fc.array(pipeline, { minLength: 1, maxLength: 3 });

/** Files one pipeline's stages write: each written by one stage only (concurrent appends interleave at random). */
function usable(p: PipelinePlan): PipelinePlan {
  const taken = new Set<string>();
  return {
    op: p.op,
    stages: p.stages.map((st, i) => ({
      program: i === 0 || READERS.has(st.program) ? st.program : '/bin/cat',
      redirects: st.redirects.filter((r, k) => {
        if (i > 0 && INPUT_FORMS.includes(r)) return false;
        // A copy of a closed fd is a SpawnError here, dash's "Bad file descriptor" there: tested apart.
        if (r === '1>&2' && st.redirects.slice(0, k).includes('2>&-')) return false;
        // dash writes "Terminated" for a lone command into the file its 2> opened; we never write into a command's files.
        if (st.program === KILLS && p.stages.length === 1 && /^2>>?[a-z]/.test(r)) return false;
        const file = FILES.find((f) => r.endsWith(f));
        if (file === undefined) return true;
        if (taken.has(file)) return false;
        taken.add(file);
        return true;
      }),
    })),
  };
}

function text(plans: PipelinePlan[]): string {
  return plans.map((p, i) => (i === 0 ? '' : ` ${p.op} `) +
    p.stages.map((st) => [st.program, ...st.redirects].join(' ')).join(' | ')).join('');
}

let dirs = 0;
function freshDir(): string {
  const dir = path.join(root, String(dirs++));
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'in'), 'line one\nline two\n');
  fs.writeFileSync(path.join(dir, 'rw'), 'abc\n');
  return dir;
}

function filesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(dir).sort()) {
    const file = path.join(dir, name);
    const mode = (fs.statSync(file).mode & 0o777).toString(8);
    out[name] = `${mode} ${fs.readFileSync(file, 'latin1')}`;
  }
  return out;
}

/** dash's `$?`: the exit code, or 128 + the signal's number. */
function status(r: ExecResult): number | null {
  if (r.exitCode !== null) return r.exitCode;
  return r.signal === null ? null : 128 + os.constants.signals[r.signal as NodeJS.Signals];
}

async function both(command: string): Promise<{ ours: unknown; dash: unknown }> {
  const a = freshDir();
  const b = freshDir();
  const mine = await exec(command, { cwd: a, reject: false, shell: false, maxBuffer: 4 << 20 });
  const sh = await exec(command, { cwd: b, reject: false, shell: true, maxBuffer: 4 << 20 });
  expect(mine.viaShell).toBe(false);
  // The stages of a pipeline run at once: the order in which two of them
  // (or dash, saying "Terminated" as it reaps one) write to the shared
  // stderr is a race in dash too, down to pieces of a line ("/bin/sh: 1: "
  // and "3: Bad file descriptor" are two writes). Its bytes are compared in
  // sorted order: the same messages, whatever their interleaving.
  const view = (r: ExecResult, dir: string) => ({
    stdout: r.stdout, stderrBytes: [...(r.stderr as string)].sort().join(''), status: status(r), files: filesOf(dir),
  });
  return { ours: view(mine, a), dash: view(sh, b) };
}

describe('pipelines, redirections and lists: byte for byte what /bin/sh -c does', () => {
  it('agrees with dash on generated commands', { timeout: 240_000 }, async () => {
    let compared = 0;
    let multi = 0;
    await fc.assert(fc.asyncProperty(plan, async (plans) => {
      const used = plans.map(usable);
      const command = text(used);
      const parsed = parseCommand(command);
      expect({ command, needsShell: parsed.needsShell, reasons: parsed.reasons }).toEqual({ command, needsShell: false, reasons: [] });
      // One command on its own is a direct exec: its signal is its own, and
      // dash's "Terminated" is not written (documented).
      if (parsed.list.length === 1 && parsed.list[0].stages.length === 1 && command.startsWith(KILLS)) return;
      const { ours, dash } = await both(command);
      expect({ command, ...(ours as object) }).toEqual({ command, ...(dash as object) });
      compared++;
      if (parsed.list.length > 1 || parsed.list[0].stages.length > 1) multi++;
    }), { numRuns: Number(process.env.NOSHELL_DIFF_RUNS ?? 300), seed: Number(process.env.NOSHELL_DIFF_SEED ?? 47) });
    expect(compared).toBeGreaterThan(200);
    expect(multi).toBeGreaterThan(100);
  });

  it('fills pipe buffers between stages and in the captured output', async () => {
    const { ours, dash } = await both('/usr/bin/seq 1 200000 | /usr/bin/tr 0-9 a-j | /bin/cat >o1; /usr/bin/head -c 300000 /dev/zero | /usr/bin/tr "\\0" x');
    expect(ours).toEqual(dash);
    expect((ours as { stdout: string }).stdout.length).toBe(300000);
  });

  it('applies redirections left to right, after the pipe (2>&1 >f differs from >f 2>&1)', async () => {
    for (const command of [
      "/bin/sh -c 'echo o; echo e >&2' 2>&1 >o1 | /usr/bin/tr a-z A-Z",
      "/bin/sh -c 'echo o; echo e >&2' >o1 2>&1 | /usr/bin/tr a-z A-Z",
      "/bin/sh -c 'echo o; echo e >&2' 3>&1 1>&2 2>&3 | /usr/bin/wc -c",
    ]) {
      const { ours, dash } = await both(command);
      expect({ command, ...(ours as object) }).toEqual({ command, ...(dash as object) });
    }
  });
});
