import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exec, runCheck } from '../../src/index';
import { childProcesses, isAlive, PROBE, readPid, waitFor } from '../helpers';

const PLUGINS = '/usr/lib/nagios/plugins';
const hasPlugins = existsSync(`${PLUGINS}/check_dummy`);
let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-check-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.runIf(hasPlugins)('real plugins from monitoring-plugins-basic', () => {
  it.each([0, 1, 2, 3] as const)('check_dummy %i maps to its state', async (code) => {
    const r = await runCheck([`${PLUGINS}/check_dummy`, String(code), 'some text']);
    expect(r).toMatchObject({ state: code, stateName: ['OK', 'WARNING', 'CRITICAL', 'UNKNOWN'][code], exitCode: code, viaShell: false });
    expect(r.output).toBe(`${['OK', 'WARNING', 'CRITICAL', 'UNKNOWN'][code]}: some text`);
  });

  // Whatever these report on this machine, our result must say the same as
  // the plugin's own exit code and output.
  const plugins: Array<[string, string[]]> = [
    ['check_load', ['-w', '5,4,3', '-c', '10,8,6']],
    ['check_disk', ['-w', '10%', '-c', '5%', '-p', '/']],
    ['check_procs', ['-w', '5000', '-c', '10000']],
    ['check_users', ['-w', '50', '-c', '100']],
    ['check_swap', ['-w', '20%', '-c', '10%']],
  ];
  it.each(plugins)('%s agrees with the plugin run directly', async (name, args) => {
    const file = `${PLUGINS}/${name}`;
    const r = await runCheck([file, ...args]);
    const direct = spawnSync(file, args, { encoding: 'utf8' });
    expect(r.exitCode).toBe(direct.status);
    expect(r.state).toBe(Math.min(direct.status ?? 3, 3));
    const first = direct.stdout.split('\n')[0];
    // Load, process counts and free space move between the two runs: compare
    // the text with its numbers masked.
    const mask = (t: string) => t.replace(/\d+(\.\d+)?/g, '#');
    expect(mask(r.output)).toBe(mask(first.split('|')[0].trim()));
    const items = (direct.stdout.match(/=/g) ?? []).length;
    expect(r.perfdata.length + r.perfdataErrors.length).toBeGreaterThanOrEqual(Math.min(items, 1));
    expect(r.rusage.userCpuMs + r.rusage.systemCpuMs).toBeGreaterThanOrEqual(0);
  });

  it('check_tcp against a local port: OK with time perfdata, CRITICAL when closed', async () => {
    const server = net.createServer((s) => s.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const ok = await runCheck(`${PLUGINS}/check_tcp -H 127.0.0.1 -p ${port}`);
      expect(ok).toMatchObject({ state: 0, viaShell: false });
      expect(ok.output).toMatch(/^TCP OK/);
      expect(ok.perfdata[0]).toMatchObject({ label: 'time', uom: 's' });
    } finally {
      await new Promise((r) => server.close(r));
    }
    const closed = await runCheck(`${PLUGINS}/check_tcp -H 127.0.0.1 -p ${port}`);
    expect(closed.state).toBe(2);
  });
});

describe('runCheck outcomes', () => {
  it('exit codes outside 0-3, 126, 127 and signals are UNKNOWN with an explicit text', async () => {
    const r7 = await runCheck([PROBE, 'exit', '7']);
    expect(r7).toMatchObject({ state: 3, exitCode: 7 });
    expect(r7.output).toBe(`Plugin ${PROBE} exited with out-of-range code 7`);
    const seg = await runCheck([PROBE, 'raise', '11']);
    expect(seg).toMatchObject({ state: 3, signal: 'SIGSEGV', exitCode: null });
    expect(seg.output).toBe(`Plugin ${PROBE} was killed by SIGSEGV`);
    const nf = await runCheck('/nonexistent/check_x -w 1 2>&1 $NOSHELL_UNSET', { shell: 'auto' });
    expect(nf).toMatchObject({ state: 3, viaShell: true, exitCode: 127 });
    expect(nf.output).toBe("Plugin /nonexistent/check_x -w 1 2>&1 $NOSHELL_UNSET was not found (exit 127): /bin/sh: 1: /nonexistent/check_x: not found");
    // Without the variable no shell is needed: the missing plugin is a spawn error, not a 127.
    const direct = await runCheck('/nonexistent/check_x -w 1 2>&1', { shell: 'auto' });
    expect(direct).toMatchObject({ state: 3, viaShell: false, spawnError: 'ENOENT', exitCode: null });
    const via127 = await runCheck('exec /nonexistent/check_x', { shell: true });
    expect(via127).toMatchObject({ state: 3, exitCode: 127 });
    expect(via127.output).toMatch(/was not found \(exit 127\)/);
  });

  it('spawn errors are results, not rejections', async () => {
    const r = await runCheck(['/nonexistent/check_foo', '-H', 'x']);
    expect(r).toMatchObject({ state: 3, stateName: 'UNKNOWN', spawnError: 'ENOENT', exitCode: null });
    expect(r.output).toContain('/nonexistent/check_foo');
    expect(r.output).toContain('ENOENT');
    const shellNeeded = await runCheck('check_x | y &', { shell: false });
    expect(shellNeeded).toMatchObject({ state: 3, spawnError: 'ESHELL' });
    expect(shellNeeded.output).toContain('background');
    // A pipeline runs without a shell; its missing stage is named.
    const stage = await runCheck('/bin/cat /etc/hostname | /nonexistent/check_y', { shell: false });
    expect(stage).toMatchObject({ state: 3, spawnError: 'ENOENT', viaShell: false });
    expect(stage.output).toContain('stage 2 of 2');
  });

  it('empty stdout says so and shows the start of stderr', async () => {
    const r = await runCheck(['sh', '-c', 'echo "config file missing" >&2; exit 2']);
    expect(r).toMatchObject({ state: 2, stderr: 'config file missing\n' });
    expect(r.output).toBe('(No output on stdout) stderr: config file missing');
  });

  it('timeout kills the whole group, state from timeoutState', async () => {
    const pidFile = path.join(tmp, 'gc.pid');
    const r = await runCheck([PROBE, 'group', pidFile, '30', 'ignore-term'], { timeout: 300, timeoutState: 2 });
    expect(r).toMatchObject({ state: 2, stateName: 'CRITICAL', timedOut: true });
    expect(r.output).toBe('Check timed out after 0.3 s');
    expect(await waitFor(() => !isAlive(readPid(pidFile)))).toBe(true);
    const d = await runCheck(['sleep', '5'], { timeout: 100 });
    expect(d).toMatchObject({ state: 3, timedOut: true });
  });

  it('forceKillAfter: undefined keeps the 2 s grace of checks, not the 5 s of spawn (issue 17: the default was spread over)', async () => {
    const pidFile = path.join(tmp, 'grace.pid');
    const t = performance.now();
    const r = await runCheck([PROBE, 'group', pidFile, '30', 'ignore-term-all'], { timeout: 100, forceKillAfter: undefined });
    const ms = performance.now() - t;
    expect(r).toMatchObject({ state: 3, timedOut: true, signal: 'SIGKILL' });
    expect(ms).toBeGreaterThan(1900);
    expect(ms).toBeLessThan(4000);
    expect(await waitFor(() => !isAlive(readPid(pidFile)))).toBe(true);
  });

  it('output past maxOutput is cut, the check still passes, the plugin is not killed', async () => {
    const r = await runCheck(['sh', '-c', `echo "OK - big | a=1"; ${PROBE} spew 1000000; exit 0`], { maxOutput: 4096 });
    expect(r).toMatchObject({ state: 0, truncated: true, exitCode: 0, signal: null, output: 'OK - big' });
    expect(r.perfdata[0]).toMatchObject({ label: 'a', value: 1 });
    expect(r.longOutput.length).toBeLessThanOrEqual(4096);
  });

  it("shell 'auto' by default; argv arrays never use it", async () => {
    const viaShell = await runCheck(`echo "OK - $((1+2))"`);
    expect(viaShell).toMatchObject({ state: 0, viaShell: true, output: 'OK - 3' });
    const direct = await runCheck(`${PROBE} exit 0`);
    expect(direct.viaShell).toBe(false);
  });

  it('a plugin that closes stdout early and keeps running past maxOutput is not killed', async () => {
    const script = `head -c 2000 /dev/zero | tr '\\0' x; exec >&- 2>&-; sleep 0.3; exit 1`;
    const r = await runCheck(['sh', '-c', script], { maxOutput: 100 });
    expect(r).toMatchObject({ state: 1, signal: null, exitCode: 1, truncated: true });
  });

  it('a background process keeping stdout open: the plugin\'s own state after the output grace; with Infinity, a timeout that is not held up', async () => {
    let t = performance.now();
    const r = await runCheck(['sh', '-c', 'echo OK - left one; sleep 5 & echo $! >&2; exit 0'], { timeout: 300 });
    expect(r).toMatchObject({ timedOut: false, state: 0, output: 'OK - left one', outputCut: true });
    expect(performance.now() - t).toBeLessThan(250);
    process.kill(Number(r.stderr.trim()), 'SIGKILL');
    t = performance.now();
    const w = await runCheck(['sh', '-c', 'echo OK; sleep 5 & exit 0'], { timeout: 300, outputGrace: Infinity });
    expect(w).toMatchObject({ timedOut: true, state: 3, outputCut: false });
    expect(performance.now() - t).toBeLessThan(2000);
  });

  it('commands that run no program are rejected, not reported OK', async () => {
    for (const command of ['', '   ', 'FOO=1']) {
      await expect(runCheck(command), JSON.stringify(command)).rejects.toThrow(TypeError);
      await expect(runCheck(command, { shell: true }), JSON.stringify(command)).rejects.toThrow(TypeError);
    }
  });

  it('bad options reject with TypeError; nothing runs', async () => {
    await expect(runCheck(['true'], { timeoutState: 4 as never })).rejects.toThrow(TypeError);
    await expect(runCheck(['true'], { maxOutput: -1 })).rejects.toThrow(TypeError);
    await expect(runCheck(['true'], { stdout: 'inherit' } as never)).rejects.toThrow(TypeError);
    await expect(runCheck(['true'], { bogus: 1 } as never)).rejects.toThrow(TypeError);
    await expect(runCheck(42 as never)).rejects.toThrow(TypeError);
    expect(childProcesses()).toEqual([]);
  });
});

describe('durations with units', () => {
  it('runCheck, exec and spawn take timeout and forceKillAfter as "300ms", "0.2s", as checks files do', async () => {
    const check = await runCheck(['/bin/sleep', '5'], { timeout: '300ms' });
    expect(check).toMatchObject({ stateName: 'UNKNOWN', timedOut: true, output: 'Check timed out after 0.3 s' });
    expect(check.durationMs).toBeLessThan(3000);
    const r = await exec(['/bin/sleep', '5'], { timeout: '0.2s', forceKillAfter: '1s', reject: false });
    expect(r).toMatchObject({ timedOut: true, signal: 'SIGTERM' });
    await expect(exec(['/bin/true'], { timeout: 'soon' })).rejects.toThrow('timeout: expected a duration like 500, "250ms", "10s" or "5m", got "soon"');
  });
});
