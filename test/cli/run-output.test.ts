// `noshell run` writes the result lines of one event-loop turn in one write
// (src/daemon/line-batch.ts): none lost, none split, none out of order, and
// all of them on stdout before it says it stopped.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LineBatch } from '../../src/daemon/line-batch';
import { waitFor } from '../helpers';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const CHECK_DUMMY = '/usr/lib/nagios/plugins/check_dummy';
const hasPlugins = existsSync(CHECK_DUMMY);
if (!hasPlugins) console.warn('skipped: noshell run output of 300 check_dummy checks: monitoring-plugins-basic is not installed');

// Made in beforeAll: a run whose -t filter skips every test here runs neither hook, and a directory made at collection was left behind.
let tmp = '';
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-run-output-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('LineBatch', () => {
  it('writes the lines of one turn in one write, in order, and nothing twice', async () => {
    const writes: string[] = [];
    const b = new LineBatch((s) => writes.push(s));
    b.add('a\n');
    b.add('b\n');
    b.add('c\n');
    expect(writes).toEqual([]);
    await turn();
    expect(writes).toEqual(['a\nb\nc\n']);
    b.add('d\n');
    await turn();
    await turn();
    expect(writes).toEqual(['a\nb\nc\n', 'd\n']);
  });

  it('writes at once when the queued lines reach maxChars, and flush() writes the rest', async () => {
    const writes: string[] = [];
    const b = new LineBatch((s) => writes.push(s), 10);
    b.add('12345\n');
    b.add('67890\n');
    expect(writes).toEqual(['12345\n67890\n']);
    b.add('x\n');
    b.flush();
    expect(writes).toEqual(['12345\n67890\n', 'x\n']);
    b.flush();
    await turn();
    expect(writes).toHaveLength(2);
  });

  it('a line longer than maxChars goes out whole, after the lines before it', () => {
    const writes: string[] = [];
    const b = new LineBatch((s) => writes.push(s), 8);
    b.add('a\n');
    const long = `${'y'.repeat(100_000)}\n`;
    b.add(long);
    expect(writes).toEqual([`a\n${long}`]);
  });
});

/** `noshell run ARGS…` with stdout and stderr collected, and its exit code. */
function runCli(args: string[]) {
  const child = spawn(process.execPath, [CLI, 'run', '--allow-root', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { child, stdout: '', stderr: '', exited: new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code))) };
  child.stdout.on('data', (d) => (out.stdout += d));
  child.stderr.on('data', (d) => (out.stderr += d));
  return out;
}

describe('noshell run output', () => {
  it.skipIf(!hasPlugins)('300 checks: every result is one whole JSON line, as many as it says it ran when stopped', async () => {
    const file = path.join(tmp, 'checks.json');
    const checks = Array.from({ length: 300 }, (_, i) => ({
      id: `c${i}`, command: [CHECK_DUMMY, String(i % 4), `out ${i} | v=${i};10;20`], interval: '1s',
    }));
    writeFileSync(file, JSON.stringify({ checks }));
    const run = runCli([file]);
    const { child, exited } = run;
    try {
      expect(await waitFor(() => run.stdout.split('\n').length > 700, 20_000), run.stderr).toBe(true);
      child.kill('SIGTERM');
      expect(await exited).toBe(128 + 15);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    const completed = /stopped after (\d+) results/.exec(run.stderr);
    expect(completed, run.stderr).not.toBeNull();
    expect(run.stdout.endsWith('\n')).toBe(true);
    const lines = run.stdout.slice(0, -1).split('\n');
    expect(lines).toHaveLength(Number(completed![1]));
    const runs = new Map<string, number>();
    for (const line of lines) {
      const r = JSON.parse(line) as { id: string; state: number; output: string; perfdata: Array<{ value: number }> };
      const i = Number(r.id.slice(1));
      expect(r.state).toBe(i % 4);
      expect(r.output).toContain(`out ${i}`);
      expect(r.perfdata[0].value).toBe(i);
      runs.set(r.id, (runs.get(r.id) ?? 0) + 1);
    }
    expect(runs.size).toBe(300);
  });
});

describe('noshell run --format text', () => {
  // A plugin's \r overprinted a CRITICAL line with a forged OK one on a terminal,
  // ESC[2J cleared the screen, OSC retitled the window, U+202E reversed the rest.
  it('a plugin\'s terminal controls come out escaped: one line per result, nothing a terminal acts on', async () => {
    const plugin = path.join(tmp, 'hostile.sh');
    writeFileSync(plugin, "#!/bin/sh\nprintf 'CRITICAL: disk full\\rOK: all fine    \\033[2J\\033]0;owned\\007\\302\\233x \\342\\200\\256kO | v=1\\n'\nexit 2\n",
      { mode: 0o755 });
    const file = path.join(tmp, 'text.json');
    writeFileSync(file, JSON.stringify({ checks: [{ id: 'disk', command: [plugin], interval: '1h' }] }));
    const run = runCli(['--format', 'text', file]);
    const { child, exited } = run;
    try {
      expect(await waitFor(() => run.stdout.includes('\n'), 20_000), run.stderr).toBe(true);
      child.kill('SIGTERM');
      expect(await exited).toBe(128 + 15);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    const lines = run.stdout.slice(0, -1).split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('CRITICAL');
    expect(lines[0]).toContain('CRITICAL: disk full\\x0dOK: all fine    \\x1b[2J\\x1b]0;owned\\x07\\x9bx \\u202ekO');
    for (let i = 0; i < run.stdout.length - 1; i++) {
      const c = run.stdout.charCodeAt(i);
      expect(c >= 0x20 && c !== 0x7f && !(c >= 0x80 && c <= 0x9f) && c !== 0x202e, `character ${i}: ${c.toString(16)}`).toBe(true);
    }
  });
});

describe('noshell run whose stdout reader goes away', () => {
  it('says so once on stderr (EPIPE), runs on, and stops cleanly', async () => {
    const file = path.join(tmp, 'epipe.json');
    writeFileSync(file, JSON.stringify({ checks: [{ id: 'x', command: ['/bin/echo', 'OK'], interval: '50ms' }] }));
    const run = runCli([file]);
    const { child, exited } = run;
    try {
      // As `| head -c 1`: one chunk read, then the pipe's read end closed.
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      child.stdout.destroy();
      expect(await waitFor(() => run.stderr.includes('EPIPE'), 10_000), run.stderr).toBe(true);
      // Results go on being made (and dropped) for a while: the line is not repeated.
      await new Promise((r) => setTimeout(r, 500));
      expect(child.exitCode).toBe(null);
      child.kill('SIGTERM');
      expect(await exited).toBe(128 + 15);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    expect(run.stderr.split('\n').filter((l) => l.includes('EPIPE'))).toEqual([
      'noshell run: stdout: EPIPE (its reader is gone); what would go there is lost from here on',
    ]);
    expect(run.stderr).toMatch(/stopped after \d+ results/);
  });
});
