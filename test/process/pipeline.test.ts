// Pipelines, lists and redirections run without /bin/sh: what dash would do
// (the differential suite compares bytes), and what a shell cannot: failures
// as SpawnErrors naming the stage and file, files opened as the command's
// user, timeouts and aborts that stop every stage, CPU of every stage.
import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  exec, ExecError, execSync, parseCommand, popen, runCheck, ShellSyntaxError, SpawnError,
} from '../../src/index';
import { isRoot, NOBODY } from '../unprivileged';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'noshell-pipeline-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
if (!isRoot) console.warn('skipped: redirections as another user need root');

/**
 * The sleeps these tests start carry this run's mark in their argument
 * (`sleep 30.<mark>`): one a machine cannot already be running, as a fixed
 * number can be (a CI host had a process with "4711" in its command line).
 */
const MARK = String(randomInt(100_000_000, 1_000_000_000));

/** Processes running `sleep N.<part of the mark>` (pgrep -f), other than pgrep itself. */
function running(marker: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', `sleep [0-9]*\\.?${marker}`], { encoding: 'utf8' })
      .trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Open fds once the loop has closed what it was closing (a watch's pidfd closes a turn after its exit). */
async function openFds(): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 50));
  return fs.readdirSync('/proc/self/fd').length;
}

describe('pipelines without a shell', () => {
  it('connects the stages and waits for all of them, as dash', async () => {
    const r = await exec('/usr/bin/printf "b\\na\\nc\\n" | /usr/bin/sort | /usr/bin/head -2');
    expect(r).toMatchObject({ stdout: 'a\nb\n', stderr: '', exitCode: 0, signal: null, viaShell: false });
    const t = performance.now();
    await exec('/bin/sleep 0.3 | /bin/true');
    expect(performance.now() - t).toBeGreaterThan(250);
  });

  it('takes argv arrays, stages with redirections, and what parseCommand gives', async () => {
    expect((await exec([['/usr/bin/printf', 'x\\ny\\n'], ['/usr/bin/sort', '-r']])).stdout).toBe('y\nx\n');
    const out = path.join(dir, 'structured.out');
    const r = await exec([{ argv: ['/bin/sh', '-c', 'echo o; echo e >&2'], redirects: [{ fd: 2, op: '>&', target: 1 }] },
      { argv: ['/usr/bin/tr', 'a-z', 'A-Z'], redirects: [{ fd: 1, op: '>>', target: out }] }]);
    expect(r.stdout).toBe('');
    expect(fs.readFileSync(out, 'utf8')).toBe('O\nE\n');
    expect(r.command).toBe(`/bin/sh -c 'echo o; echo e >&2' 2>&1 | /usr/bin/tr a-z A-Z >> ${out}`);
    const parsed = parseCommand('/bin/false || /usr/bin/printf "%s" fallback');
    expect((await exec(parsed)).stdout).toBe('fallback');
    await expect(exec([['/bin/true'], []])).rejects.toThrow(TypeError);
    await expect(exec([{ argv: ['/bin/true'], redirects: [{ fd: 12, op: '>', target: 'x' }] }])).rejects.toThrow(/0-9/);
    await expect(exec({ list: [{ op: '&&', stages: [['/bin/true']] }] })).rejects.toThrow(/first pipeline/);
    await expect(exec(parseCommand('a | b &'))).rejects.toThrow(/needs a shell/);
  });

  it('has dash\'s status: the last stage\'s, 128 + a signal; pipefail takes the last failure', async () => {
    expect((await exec('/bin/false | /bin/true')).exitCode).toBe(0);
    await expect(exec('/bin/false | /bin/true', { pipefail: true })).rejects.toMatchObject({ exitCode: 1 });
    expect((await exec('/bin/true | /bin/false', { reject: false })).exitCode).toBe(1);
    const killed = await exec("/bin/true | /bin/sh -c 'kill -TERM $$'", { reject: false });
    expect(killed).toMatchObject({ exitCode: 143, signal: null, stderr: 'Terminated\n' });
    // SIGPIPE of an earlier stage is the normal end of `yes | head`.
    expect(await exec('/usr/bin/yes | /usr/bin/head -2')).toMatchObject({ stdout: 'y\ny\n', exitCode: 0, stderr: '' });
  });

  it('a stage that cannot start is a SpawnError naming it; the stages started are stopped', async () => {
    const before = await openFds();
    const err = await exec('/bin/sleep 7.7123 | /nonexistent/check_procs | /bin/cat').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpawnError);
    expect(err).toMatchObject({ code: 'ENOENT', stage: 1, path: '/nonexistent/check_procs' });
    expect((err as Error).message).toContain('stage 2 of 3');
    expect(running('sleep 7.7123')).toEqual([]);
    expect(await openFds()).toBe(before);
    // A monitoring check: not OK (as `check_procs | head -1` would be under sh), but UNKNOWN saying why.
    const check = await runCheck('/nonexistent/check_procs | /usr/bin/head -1');
    expect(check).toMatchObject({ state: 3, spawnError: 'ENOENT' });
  });

  it('a redirection that cannot be opened is a SpawnError naming the file', async () => {
    const err = await exec(`/bin/true | /bin/cat < ${dir}/missing`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpawnError);
    expect(err).toMatchObject({ code: 'ENOENT', step: 'redirect', redirection: `< ${dir}/missing`, stage: 1 });
    const one = await exec(`/bin/echo x >> ${dir}/no/such/dir`).catch((e: unknown) => e);
    expect(one).toMatchObject({ code: 'ENOENT', step: 'redirect', redirection: `>> ${dir}/no/such/dir` });
    await expect(exec('/bin/echo x 1>&7')).rejects.toMatchObject({ code: 'EBADF', step: 'redirect', redirection: '>&7' });
  });

  it('opens files relative to cwd with 0666 & ~umask, O_APPEND for >>, truncating for >', async () => {
    const sub = fs.mkdtempSync(path.join(dir, 'cwd-'));
    await exec('/bin/echo one > f; /bin/echo two >> f; /bin/echo 3 >| g; /bin/cat < f <> h', { cwd: sub });
    expect(fs.readFileSync(path.join(sub, 'f'), 'utf8')).toBe('one\ntwo\n');
    const mode = fs.statSync(path.join(sub, 'f')).mode & 0o777;
    expect(mode).toBe(0o666 & ~process.umask());
    await exec('/bin/echo new > f', { cwd: sub });
    expect(fs.readFileSync(path.join(sub, 'f'), 'utf8')).toBe('new\n');
  });

  it.runIf(isRoot)('opens files as the command\'s user, never ours', async () => {
    const theirs = fs.mkdtempSync(path.join(dir, 'nobody-'));
    fs.chownSync(theirs, NOBODY, NOBODY);
    await exec('/usr/bin/id -u > mine', { cwd: theirs, uid: NOBODY, gid: NOBODY });
    const st = fs.statSync(path.join(theirs, 'mine'));
    expect({ uid: st.uid, text: fs.readFileSync(path.join(theirs, 'mine'), 'utf8') }).toEqual({ uid: NOBODY, text: `${NOBODY}\n` });
    // Root could write here; nobody cannot.
    const rootOnly = fs.mkdtempSync(path.join(dir, 'root-'));
    fs.chmodSync(rootOnly, 0o755);
    const err = await exec('/bin/true | /bin/echo x > out', { cwd: rootOnly, uid: NOBODY, gid: NOBODY }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'EACCES', step: 'redirect', stage: 1 });
    expect(fs.existsSync(path.join(rootOnly, 'out'))).toBe(false);
    fs.writeFileSync(path.join(rootOnly, 'secret'), 'root only\n', { mode: 0o600 });
    await expect(exec('/bin/cat < secret', { cwd: rootOnly, uid: NOBODY, gid: NOBODY })).rejects.toMatchObject({ code: 'EACCES' });
  });

  it('a timeout or an abort stops every stage (one process group)', async () => {
    const t = performance.now();
    const err = await exec(`/bin/sleep 30.${MARK} | /bin/sleep 31.${MARK}`, { timeout: 200 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExecError);
    expect(err).toMatchObject({ timedOut: true });
    expect(performance.now() - t).toBeLessThan(3000);
    expect(running(MARK)).toEqual([]);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    await expect(exec(`/bin/true; /bin/sleep 32.${MARK} | /bin/cat`, { signal: ac.signal })).rejects.toMatchObject({ aborted: true });
    expect(running(MARK)).toEqual([]);
    // The deadline is the whole list's: the second pipeline gets what is left.
    const list = await exec(`/bin/sleep 0.2; /bin/sleep 5.${MARK}`, { timeout: 600, reject: false });
    expect(list.timedOut).toBe(true);
    expect(list.durationMs).toBeLessThan(2000);
  });

  it('rusage and durationMs cover every stage', async () => {
    const burn = "/bin/sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'";
    const r = await exec(`${burn} | /bin/true`);
    expect(r.rusage.userCpuMs + r.rusage.systemCpuMs).toBeGreaterThan(50);
    const l = await exec(`${burn}; /bin/true`);
    expect(l.rusage.userCpuMs + l.rusage.systemCpuMs).toBeGreaterThan(50);
  });

  it('input goes to the first stage; a list\'s commands share one stdin', async () => {
    expect((await exec('/bin/cat | /usr/bin/tr a-z A-Z', { input: 'abc' })).stdout).toBe('ABC');
    expect((await exec('/usr/bin/head -c 2; /bin/cat', { input: 'abcdef' })).stdout).toBe('abcdef');
  });

  it('lets the output go once every stage has exited and the grace ends', async () => {
    const t = performance.now();
    const r = await exec(`/bin/true | /bin/sh -c 'sleep 33.${MARK} & echo hi'`);
    expect(r).toMatchObject({ stdout: 'hi\n', outputCut: true, exitCode: 0 });
    expect(performance.now() - t).toBeLessThan(3000);
    for (const pid of running(`33.${MARK}`)) process.kill(pid, 'SIGKILL');
  });

  it('leaves no fds and no zombies after 200 pipelines', async () => {
    // Warm: the process-wide /dev/null and the executor's own fds are opened once, on first use.
    await exec('/usr/bin/printf x | /bin/cat | /usr/bin/wc -c >/dev/null');
    const before = await openFds();
    await Promise.all(Array.from({ length: 200 }, (_, i) => exec(`/usr/bin/printf ${i} | /bin/cat | /usr/bin/wc -c >/dev/null`)));
    expect(await openFds()).toBe(before);
    const zombies = execFileSync('ps', ['-o', 'stat=', '--ppid', String(process.pid)], { encoding: 'utf8' }).split('\n').filter((s) => s.startsWith('Z'));
    expect(zombies).toEqual([]);
  });

  it('refuses what a method or option cannot do for a pipeline', async () => {
    await expect(exec('/bin/echo x > /dev/null', { method: 'posix_spawn' })).rejects.toThrow(/posix_spawn/);
    await expect(exec('/bin/true | /bin/true', { detached: true })).rejects.toThrow(/detached/);
    await expect(exec('/bin/true | /bin/true', { pipefail: 'yes' as unknown as boolean })).rejects.toThrow(TypeError);
  });
});

describe('what an outside review found', () => {
  it('a FIFO never blocks the spawning thread: no reader is ENXIO at once, reading one is refused', async () => {
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const t = performance.now();
    await expect(exec(`/bin/true | /bin/echo x > ${fifo}`, { timeout: 500 })).rejects.toMatchObject({ code: 'ENXIO', step: 'redirect', stage: 1 });
    await expect(exec(`/bin/echo x > ${fifo}`, { timeout: 500 })).rejects.toMatchObject({ code: 'ENXIO', step: 'redirect' });
    await expect(exec(`/bin/cat < ${fifo}`, { timeout: 500 })).rejects.toMatchObject({ code: 'ENXIO' });
    expect(() => execSync(`/bin/cat < ${fifo}`, { timeout: 500 })).toThrow(SpawnError);
    expect(performance.now() - t).toBeLessThan(400);
    // With a reader there (the Nagios command file), the write goes through.
    const reader = exec(`/bin/cat ${fifo}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await exec(`/usr/bin/printf "[1] RESTART_PROGRAM\\n" > ${fifo}`);
    expect((await reader).stdout).toBe('[1] RESTART_PROGRAM\n');
  });

  it('a line continuation between the fd and `>` keeps the fd, as in dash; N>&N is nothing, open or not', async () => {
    const sub = fs.mkdtempSync(path.join(dir, 'cont-'));
    const r = await exec("/bin/sh -c 'echo out; echo err >&2' 2\\\n>f", { cwd: sub });
    expect({ stdout: r.stdout, f: fs.readFileSync(path.join(sub, 'f'), 'utf8') }).toEqual({ stdout: 'out\n', f: 'err\n' });
    expect((await exec('/bin/true 5>&5')).exitCode).toBe(0);
    expect((await exec('/bin/true 2>&- 2>&2')).exitCode).toBe(0);
  });

  it('a real-time signal is 128 + its number with dash\'s line, not a TypeError', async () => {
    const r = await exec("/bin/true | /bin/sh -c 'kill -RTMIN $$'", { reject: false });
    expect(r).toMatchObject({ exitCode: 162, signal: null, stderr: 'Real-time signal 0\n' });
  });

  it('maxBuffer stops a pipeline with our signal, not a status dash would give', async () => {
    const err = await exec('/usr/bin/yes | /bin/cat', { maxBuffer: 1000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExecError);
    // Its own signal (SIGTERM, or SIGPIPE when cat writes to the pipe we stopped reading first), no job line.
    expect(err).toMatchObject({ maxBufferExceeded: 'stdout', exitCode: null, stderr: '' });
    expect(['SIGTERM', 'SIGPIPE']).toContain((err as ExecError).signal);
  });

  it('an AbortSignal already aborted starts nothing', async () => {
    const file = path.join(dir, 'aborted');
    await expect(exec(`/usr/bin/touch ${file} | /bin/cat`, { signal: AbortSignal.abort() })).rejects.toThrow(/abort/i);
    await expect(exec(`/bin/true > ${file} | /bin/cat`, { signal: AbortSignal.abort() })).rejects.toThrow(/abort/i);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('a timeout SIGKILLs what is left of the group when the last stage exits', async () => {
    const command = `/bin/sh -c '(trap "" TERM; exec /bin/sleep 37.${MARK}) >/dev/null 2>&1 & exec /bin/sleep 38.${MARK}' | /bin/cat`;
    await expect(exec(command, { timeout: 300, forceKillAfter: 0 })).rejects.toMatchObject({ timedOut: true });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(running(`37.${MARK}`)).toEqual([]);
  });

  it('ref: false lets the process exit while a pipeline with input runs (once the input is in the pipe)', () => {
    const script = `require(${JSON.stringify(path.join(__dirname, '..', '..', 'dist', 'index.js'))})` +
      `.exec('/bin/sleep 3.${MARK} | /bin/cat', { input: Buffer.alloc(1 << 10), ref: false, cleanup: true })`;
    const t = performance.now();
    execFileSync(process.execPath, ['-e', script]);
    expect(performance.now() - t).toBeLessThan(2500);
  });

  it('more than 256 commands or 4,096 redirections need a shell, in linear time', async () => {
    expect(parseCommand('/bin/true;'.repeat(256)).needsShell).toBe(false);
    expect(parseCommand('/bin/true;'.repeat(257)).reasons).toEqual(['too large']);
    expect(parseCommand(`/bin/true${' >/dev/null'.repeat(4097)}`).reasons).toEqual(['too large']);
    const t = performance.now();
    const big = parseCommand(`x ${'a;'.repeat(8 << 20)}`);
    expect(big.reasons).toEqual(['too large']);
    expect(big.list.reduce((n, p) => n + p.stages.length, 0)).toBe(256);
    expect(performance.now() - t).toBeLessThan(10_000);
    await expect(exec([{ argv: ['/bin/true'], redirects: Array.from({ length: 4097 }, () => ({ fd: 1, op: '>', target: '/dev/null' })) }]))
      .rejects.toThrow(/4096 redirections/);
  });

  it('structure is read once, own properties only: a hostile array or prototype changes nothing', async () => {
    const sneaky = [{ fd: 1, op: '>', target: `${dir}/evil\0tail` }];
    Object.defineProperty(sneaky, 'map', { value: () => [] });
    await expect(exec([{ argv: ['/bin/true'], redirects: sneaky }])).rejects.toThrow(/NUL/);
    expect(fs.existsSync(`${dir}/evil`)).toBe(false);
    (Object.prototype as Record<string, unknown>).redirects = [{ fd: 1, op: '>', target: `${dir}/polluted` }];
    try {
      await exec([['/bin/true'], ['/bin/true']]);
    } finally {
      delete (Object.prototype as Record<string, unknown>).redirects;
    }
    expect(fs.existsSync(`${dir}/polluted`)).toBe(false);
  });
});

describe('popen of a pipeline', () => {
  it("'r' reads the last stage, 'w' writes the first; close() waits for every stage", async () => {
    const r = popen('/usr/bin/seq 1 5 | /usr/bin/tr 1-5 a-e | /bin/cat', 'r');
    const lines: string[] = [];
    for await (const line of r.lines()) lines.push(line);
    expect(lines).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(await r.close()).toMatchObject({ exitCode: 0, signal: null });
    const out = path.join(dir, 'popen-w.out');
    const w = popen(`/usr/bin/tr a-z A-Z | /bin/cat > ${out}`, 'w');
    w.write('hello\n');
    expect((await w.close()).exitCode).toBe(0);
    expect(fs.readFileSync(out, 'utf8')).toBe('HELLO\n');
    // stderr: 'stdout' sends every stage's stderr into what 'r' reads.
    const both = popen("/bin/sh -c 'echo e1 >&2; echo o' | /bin/sh -c 'cat; echo e2 >&2'", 'r', { stderr: 'stdout' });
    let text = '';
    for await (const chunk of both) text += String(chunk);
    expect(text.split('\n').sort()).toEqual(['', 'e1', 'e2', 'o']);
    await both.close();
  });

  it('closing a reader early ends every stage; a timeout stops the group', async () => {
    const before = await openFds();
    const r = popen('/usr/bin/yes | /bin/cat | /bin/cat', 'r');
    for await (const line of r.lines()) if (line === 'y') break;
    expect((await r.close()).exitCode).not.toBe(null);
    const t = popen(`/bin/sleep 34.${MARK} | /bin/sleep 35.${MARK}`, 'r', { timeout: 200 });
    expect(await t.close()).toMatchObject({ timedOut: true });
    expect(running(MARK)).toEqual([]);
    expect(await openFds()).toBe(before);
  });

  it('a stage that cannot start throws SpawnError at once, naming it; in a later pipeline close() rejects', async () => {
    expect(() => popen(`/bin/sleep 36.${MARK} | /nonexistent/x`, 'r')).toThrow(SpawnError);
    expect(() => popen(`/bin/sleep 36.${MARK} | /nonexistent/x`, 'r')).toThrow(/stage 2 of 2/);
    const later = popen('/usr/bin/printf a; /nonexistent/y', 'r');
    let text = '';
    for await (const chunk of later) text += String(chunk);
    expect(text).toBe('a');
    await expect(later.close()).rejects.toMatchObject({ code: 'ENOENT', path: '/nonexistent/y' });
  });

  it('a list reads and writes one stream, as the commands of sh -c share its stdout and stdin', async () => {
    const r = popen('/usr/bin/printf a; /bin/false || /usr/bin/printf "b\\n" | /bin/cat && /bin/false', 'r');
    let text = '';
    for await (const chunk of r) text += String(chunk);
    expect(text).toBe('ab\n');
    expect(await r.close()).toMatchObject({ exitCode: 1, signal: null });
    const sub = fs.mkdtempSync(path.join(dir, 'popen-list-'));
    const w = popen('/usr/bin/head -c 2 > f1; /bin/cat > f2', 'w', { cwd: sub });
    w.write('abcdef');
    expect((await w.close()).exitCode).toBe(0);
    expect([fs.readFileSync(path.join(sub, 'f1'), 'utf8'), fs.readFileSync(path.join(sub, 'f2'), 'utf8')]).toEqual(['ab', 'cdef']);
    const t = popen(`/bin/true; /bin/sleep 39.${MARK}; /usr/bin/touch never`, 'r', { timeout: 200, cwd: sub });
    for await (const chunk of t) void chunk;
    expect(await t.close()).toMatchObject({ timedOut: true });
    expect(fs.existsSync(path.join(sub, 'never'))).toBe(false);
    expect(running(`39.${MARK}`)).toEqual([]);
  });
});

describe('one command with redirections where only one command runs', () => {
  it('execSync applies them; pipelines there need exec or a shell', async () => {
    expect(execSync('/bin/sh -c "echo e >&2" 2>&1').stdout).toBe('e\n');
    expect(() => execSync('/bin/true | /bin/true')).toThrow(ShellSyntaxError);
    expect(execSync('/bin/echo a | /usr/bin/tr a b', { shell: 'auto' })).toMatchObject({ stdout: 'b\n', viaShell: true });
    expect(() => execSync([['/bin/true'], ['/bin/true']])).toThrow(/needs exec/);
    const p = popen('/bin/sh -c "echo e >&2" 2>&1', 'r');
    let text = '';
    for await (const chunk of p) text += String(chunk);
    expect(text).toBe('e\n');
    expect((await p.close()).exitCode).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(running(`36.${MARK}`)).toEqual([]);
  });
});
