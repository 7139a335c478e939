// `noshell run` reloads its checks file on SIGHUP (issue 12): unchanged checks
// keep their schedule and state, new ones start, removed ones stop, changed
// ones are replaced, and a file that fails to load changes nothing. A real
// `noshell run` process, its JSON lines, and the file rewritten between signals.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
let tmp = '';
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-reload-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

interface Line { id: string; output: string; attempt: number; stateType: string }

const echo = (id: string, text: string) => ({ id, command: ['/bin/echo', text], interval: '250ms' });
// Always CRITICAL with many attempts: its attempt counter only grows while
// the check is kept; a re-added check would start again at 1.
const keep = {
  id: 'keep', command: ['/bin/sh', '-c', 'echo "CRITICAL - keep"; exit 2'],
  interval: '250ms', retryInterval: '250ms', maxAttempts: 1000,
};

describe('noshell run: SIGHUP reloads the checks file', () => {
  it('adds, removes and replaces checks; unchanged ones keep their state; a bad file changes nothing', async () => {
    const file = path.join(tmp, 'checks.json');
    writeFileSync(file, JSON.stringify({ checks: [keep, echo('change', 'OK - v1'), echo('gone', 'OK - gone')] }));
    const child = spawn(process.execPath, [CLI, 'run', '--allow-root', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const lines = (): Line[] => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line);
    const count = (id: string, output?: string, from = 0) =>
      lines().slice(from).filter((l) => l.id === id && (output === undefined || l.output === output)).length;

    const everyoneRan = () => count('keep') >= 2 && count('change') >= 2 && count('gone') >= 2;
    expect(await waitFor(everyoneRan, 15_000), stderr).toBe(true);

    // v2: keep as it was, change changed, gone gone, new new.
    writeFileSync(file, JSON.stringify({ checks: [echo('new', 'OK - new'), keep, echo('change', 'OK - v2')] }));
    child.kill('SIGHUP');
    expect(await waitFor(() => stderr.includes('reloaded'), 15_000), stderr).toBe(true);
    const atReload = lines().length;
    expect(stderr).toContain('1 added ("new"), 1 removed ("gone"), 1 changed ("change"), 1 unchanged');
    expect(await waitFor(() => count('new', 'OK - new') >= 2 && count('change', 'OK - v2') >= 2 && count('keep', undefined, atReload) >= 2, 15_000), stderr).toBe(true);
    // A run already going at the reload may still report; nothing after it.
    expect(count('gone', undefined, atReload)).toBeLessThanOrEqual(1);
    const firstV2 = lines().findIndex((l) => l.output === 'OK - v2');
    expect(lines().slice(firstV2).filter((l) => l.output === 'OK - v1').length).toBeLessThanOrEqual(1);

    // v3 fails validation: logged, and the v2 set runs on.
    writeFileSync(file, JSON.stringify({ checks: [echo('new', 'OK - new'), { ...keep, colour: 'red' }] }));
    child.kill('SIGHUP');
    expect(await waitFor(() => stderr.includes('reload of'), 15_000), stderr).toBe(true);
    expect(stderr).toContain(`reload of ${file} failed, the running checks go on`);
    expect(stderr).toContain('checks[1] (id "keep"): unknown field "colour"');
    const atFailure = lines().length;
    expect(await waitFor(() => count('change', 'OK - v2', atFailure) >= 2 && count('keep', undefined, atFailure) >= 2, 15_000)).toBe(true);

    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    // keep was never re-added: its attempts went 1, 2, 3, … through both reloads.
    const attempts = lines().filter((l) => l.id === 'keep').map((l) => l.attempt);
    expect(attempts.length).toBeGreaterThanOrEqual(6);
    expect(attempts).toEqual(attempts.map((_, i) => i + 1));
    expect(lines().filter((l) => l.id === 'keep').every((l) => l.stateType === 'SOFT')).toBe(true);
  }, 90_000);

  it('SIGTERM during a long reload: the load is dropped (its thread terminated) and noshell exits at once', async () => {
    const file = path.join(tmp, 'long.yaml');
    writeFileSync(file, 'checks:\n  - {id: a, command: [/bin/echo, OK], interval: 250ms}\n');
    const child = spawn(process.execPath, [CLI, 'run', '--allow-root', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(child);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    expect(await waitFor(() => stderr.includes('1 check from'), 15_000), stderr).toBe(true);
    // ~3.7 MiB of YAML (the cap is 4): seconds of parsing on the loading thread.
    writeFileSync(file, `checks:\n${Array.from({ length: 90_000 }, (_, i) => `  - {id: c${i}, command: x, interval: 1h}\n`).join('')}`);
    child.kill('SIGHUP');
    expect(await waitFor(() => stderr.includes('SIGHUP, reloading'), 15_000), stderr).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    const t = Date.now();
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    // The stop's own deadline is 5 s for running checks; the load held it to its end before (~10 s).
    expect(Date.now() - t).toBeLessThan(3000);
    expect(stderr).not.toContain('reloaded');
    expect(stderr).not.toContain('reload of');
  }, 60_000);
  // Before: a changed check was removed and added, so its series vanished until the new
  // definition's first run (up to an interval), and an alert on a check that never ran fired.
  it("a reload that changes a check keeps its state series until the new definition's first result", async () => {
    const file = path.join(tmp, 'changed.json');
    const write = (warn: string) => writeFileSync(file, JSON.stringify({
      checks: [{ id: 'disk', command: ['/usr/lib/nagios/plugins/check_dummy', '2', `full at ${warn}`], interval: '1h' }],
    }));
    write('90');
    const child = spawn(process.execPath, [CLI, 'run', '--allow-root', '--metrics-port', '0', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    started.push(child);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    expect(await waitFor(() => /metrics on \S+/.test(stderr), 15_000), stderr).toBe(true);
    const url = /metrics on (\S+)/.exec(stderr)![1];
    const state = async () => (await (await fetch(url)).text()).split('\n').find((l) => l.startsWith('noshell_check_state{'));
    // One check: its first run is at the start of its hour.
    for (const end = Date.now() + 15_000; (await state()) === undefined && Date.now() < end;) await new Promise((r) => setTimeout(r, 1100));
    expect(await state()).toBe('noshell_check_state{check="disk"} 2');
    write('95');
    child.kill('SIGHUP');
    expect(await waitFor(() => stderr.includes('1 changed'), 15_000), stderr).toBe(true);
    // Past maxAgeMs: a new render, with the new definition and no run of it yet (its first is somewhere in the hour).
    await new Promise((r) => setTimeout(r, 1100));
    expect(await state()).toBe('noshell_check_state{check="disk"} 2');
  }, 60_000);

  it('the file\'s top-level "metrics" options apply at start and again at each reload; left out, they go back to the defaults', async () => {
    const file = path.join(tmp, 'metrics.json');
    const perf = (id: string) => ({ id, command: ['/bin/echo', 'OK | rta=1ms;5;10 pl=0%'], interval: '200ms' });
    const write = (metrics?: object) => writeFileSync(file, JSON.stringify({ ...(metrics ? { metrics } : {}), checks: [perf('web-1'), perf('db-1')] }));
    write({ perfdata: { checks: ['web-*'], labels: ['rta'] }, perfdataLimit: 7 });
    const child = spawn(process.execPath, [CLI, 'run', '--allow-root', '--metrics-port', '0', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    started.push(child);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    expect(await waitFor(() => stderr.includes('checks from'), 15_000), stderr).toBe(true);
    const url = /metrics on (\S+)/.exec(stderr)![1];
    const perfLines = async () => (await (await fetch(url)).text()).split('\n').filter((l) => l.startsWith('noshell_check_perfdata{'));
    const limitLine = async () => (await (await fetch(url)).text()).split('\n').find((l) => l.startsWith('noshell_check_perfdata_label_sets_limit '));
    // The first results: every scrape is a new render until then (maxAgeMs starts at each render).
    for (const end = Date.now() + 15_000; (await perfLines()).length === 0 && Date.now() < end;) await new Promise((r) => setTimeout(r, 1100));
    expect(await perfLines()).toEqual(['noshell_check_perfdata{check="web-1",label="rta",uom="s"} 0.001']);
    expect(await limitLine()).toBe('noshell_check_perfdata_label_sets_limit 7');

    write({ perfdata: false });
    child.kill('SIGHUP');
    expect(await waitFor(() => stderr.includes('new metrics options') && stderr.includes('reloaded'), 15_000), stderr).toBe(true);
    // A scrape within a second of the last may be that one (maxAgeMs).
    await new Promise((r) => setTimeout(r, 1100));
    expect(await perfLines()).toEqual([]);
    expect(await limitLine()).toBe('noshell_check_perfdata_label_sets_limit 100');

    const reloads = stderr.split('reloaded').length;
    write();
    child.kill('SIGHUP');
    expect(await waitFor(() => stderr.split('reloaded').length > reloads, 15_000), stderr).toBe(true);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await perfLines()).length).toBe(4);
    // An unchanged file changes nothing: no new options line.
    const optionLines = stderr.split('new metrics options').length;
    child.kill('SIGHUP');
    expect(await waitFor(() => stderr.split('reloaded').length > reloads + 1, 15_000), stderr).toBe(true);
    expect(stderr.split('new metrics options').length).toBe(optionLines);
  }, 60_000);
});
