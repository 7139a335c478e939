// What an outside review did to `noshell gearman-worker` (issue 17), done
// again from outside: huge payloads, 200,000 spaces of stderr, a gearmand
// that floods status jobs and stops reading, 1,100 idle metrics connections
// under `ulimit -n 1024`, and starting it as root. Each is checked for what
// an operator sees: the worker alive, results delivered, memory and fds bounded.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPayloadCodec } from '../../src/gearman/payload/crypto';
import { formatJob } from '../../src/gearman/payload/job-payload';
import { DEFAULT_MAX_BODY, PacketType as T } from '../../src/gearman/protocol/packet';
import { trimCSpace } from '../../src/gearman/worker/run-job';
import { freePort, waitUntil } from '../fixtures/gearman/harness';
import { HostileGearmand } from '../fixtures/gearman/hostile-gearmand';
import { CLI, WorkerProcess } from '../fixtures/gearman/worker-process';
import { logMessage } from '../../src/daemon/log-file';
import { isRoot, NOBODY, removeUnprivilegedCopy, unprivilegedPackage } from '../unprivileged';

const KEY = 'hardening-key';
const codec = createPayloadCodec({ key: KEY });
let tmp = '';
let srv: HostileGearmand | null = null;
let worker: WorkerProcess | null = null;

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-hardening-'));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
  // The package copied for nobody (a ~20 MB mkdtemp of dist and node_modules, left in /tmp after every run before).
  removeUnprivilegedCopy();
});
afterEach(async () => {
  await worker?.dispose();
  worker = null;
  await srv?.close();
  srv = null;
});

function hostJob(command: string, extra: Record<string, string> = {}): string {
  return formatJob({ type: 'host', hostName: 'h', commandLine: command, extra });
}

function results(s: HostileGearmand): string[] {
  return s.results.map((r) => codec.decode(r.data));
}

async function startAgainst(mode: ConstructorParameters<typeof HostileGearmand>[0], args: string[] = []): Promise<HostileGearmand> {
  srv = new HostileGearmand(mode);
  const address = await srv.listen();
  const logfile = path.join(tmp, `worker-${Date.now()}-${Math.random()}.log`);
  worker = new WorkerProcess([`--server=${address}`, `--key=${KEY}`, '--hosts', '--identifier=hard', ...args], logfile);
  const s = srv;
  await waitUntil(() => s.count(T.CAN_DO) > 0, 10_000, 'the worker to announce its queues');
  return s;
}

describe('job payloads at every size up to the packet limit', () => {
  it('a 5 MiB job payload no longer kills the worker: valid ones run, invalid ones get WORK_FAIL, the worker lives', async () => {
    const s = await startAgainst('normal', ['--max-worker=2']);
    const MiB = 1024 * 1024;
    const sizes = [1024, MiB, 4.35 * MiB, 5 * MiB, 8 * MiB, DEFAULT_MAX_BODY - 4096].map(Math.floor);
    const valid: string[] = [];
    const invalid: string[] = [];
    for (const size of sizes) {
      // Base64 of AES blocks grows the text by 4/3: pad the job to land near `size`.
      const pad = 'p'.repeat(Math.max(0, Math.floor((size * 3) / 4) - 200));
      const payload = codec.encode(hostJob('/bin/true', { x_pad: pad }));
      expect(payload.length).toBeLessThan(DEFAULT_MAX_BODY - 64);
      valid.push(s.queue('host', payload));
      // Not base64: the last character, or a length that is not a multiple of 4.
      invalid.push(s.queue('host', `${'A'.repeat(size - 1)}!`));
      invalid.push(s.queue('host', 'A'.repeat(size - (size % 4) + 1)));
    }
    await waitUntil(() => s.results.length === valid.length && s.failed.size === invalid.length, 120_000, 'every job answered');
    expect(worker!.alive).toBe(true);
    expect([...s.failed].sort()).toEqual([...invalid].sort());
    expect(results(s).every((r) => r.includes('return_code=0'))).toBe(true);
    expect(worker!.log()).toMatch(/payload is not valid base64 .*; WORK_FAIL/);
    // The payloads are gone once answered: memory does not hold on to them.
    const rssMb = worker!.statusKb('VmRSS') / 1024;
    console.log(`worker RSS after ${sizes.length * 3} jobs up to ${sizes.at(-1)} bytes: ${rssMb.toFixed(0)} MB, peak ${(worker!.statusKb('VmHWM') / 1024).toFixed(0)} MB`);
    expect(rssMb).toBeLessThan(400);
  }, 180_000);

  it('a packet over the size limit costs the connection, not the worker, which reconnects and goes on', async () => {
    const s = await startAgainst('normal');
    s.assignUnasked('host', Buffer.alloc(DEFAULT_MAX_BODY + 1, 0x41));
    await waitUntil(() => s.workers.length >= 2, 10_000, 'a second worker connection');
    const handle = s.queue('host', codec.encode(hostJob('/bin/true')));
    // The result (its own connection) and WORK_COMPLETE (the worker's) race: wait for both.
    await waitUntil(() => s.results.length === 1 && s.completed.has(handle), 10_000, 'the next job run and its WORK_COMPLETE');
    expect(worker!.alive).toBe(true);
    expect(worker!.log()).toMatch(/larger than|too large|exceeds/i);
  });
});

describe('plugin stderr', () => {
  it('trimCSpace cuts exactly C white space from both ends', () => {
    expect(trimCSpace(' \t\n\v\f\rx y\r\f\v\n\t ')).toBe('x y');
    expect(trimCSpace('\u00a0x\u00a0')).toBe('\u00a0x\u00a0'); // isspace() in the C locale: ASCII only
    expect(trimCSpace('      ')).toBe('');
    expect(trimCSpace('')).toBe('');
    const inner = `x${' '.repeat(200_000)}x`;
    expect(trimCSpace(`  ${inner}  `)).toBe(inner);
  });

  it('trimming 200,000 spaces of stderr no longer freezes the worker (1 MiB of them: result in seconds)', async () => {
    const plugin = path.join(tmp, 'spaces.sh');
    writeFileSync(plugin, "#!/bin/sh\nprintf x >&2\nhead -c 1048576 /dev/zero | tr '\\000' ' ' >&2\nprintf x >&2\necho ok\n");
    chmodSync(plugin, 0o755);
    const s = await startAgainst('normal');
    const t0 = performance.now();
    s.queue('host', codec.encode(hostJob(plugin)));
    s.queue('host', codec.encode(hostJob('/bin/true')));
    await waitUntil(() => s.results.length === 2, 60_000, 'both results');
    const ms = performance.now() - t0;
    console.log(`1 MiB of inner stderr spaces: both results after ${ms.toFixed(0)} ms`);
    const r = results(s).find((x) => x.includes('output=ok'))!;
    // Compared as a boolean: a failing diff of two 1 MiB strings takes vitest minutes.
    expect(r.includes(`output=ok\\n\\n[x${' '.repeat(1_048_576)}x] \n`)).toBe(true);
    // Quadratic, this took minutes (15.6 s for 200,000 spaces).
    expect(ms).toBeLessThan(20_000);
  }, 90_000);
});

describe('plugins that cannot be started', () => {
  it('a spawn error other than ENOENT/EACCES (ENOEXEC) gets return code 3 and a text saying why, not an empty output', async () => {
    const script = path.join(tmp, 'no-shebang');
    writeFileSync(script, 'echo hi\n');
    chmodSync(script, 0o755);
    const s = await startAgainst('normal');
    s.queue('host', codec.encode(hostJob(script)));
    await waitUntil(() => s.results.length === 1, 10_000, 'the result');
    const r = results(s)[0];
    expect(r).toMatch(/\nreturn_code=3\n/);
    expect(r).toMatch(/\noutput=UNKNOWN: cannot start the plugin: .*ENOEXEC.*\(worker: hard\)/);
  });

  it('a command line longer than one argument may be (16 MiB of `a a a …`) is refused at once: UNKNOWN, no parse, no 1 GB', async () => {
    const s = await startAgainst('normal', ['--max-worker=4']);
    const rss0 = worker!.statusKb('VmRSS');
    for (let i = 0; i < 4; i++) s.queue('host', codec.encode(hostJob(`/bin/echo ${'a '.repeat(6_000_000)}`)));
    s.queue('host', codec.encode(hostJob(`/bin/echo ${'b'.repeat(100_000)}`)));
    await waitUntil(() => s.results.length === 5, 60_000, 'five results');
    const all = results(s);
    const refused = all.filter((r) => /\noutput=UNKNOWN: command line of 12000010 characters is longer than one argument may be/.test(r));
    expect(refused).toHaveLength(4);
    for (const r of refused) expect(r).toMatch(/\nreturn_code=3\n/);
    // Under the limit: runs.
    expect(all.filter((r) => r.includes(`output=${'b'.repeat(100_000)}\\n`))).toHaveLength(1);
    const peakMb = (worker!.statusKb('VmHWM') - rss0) / 1024;
    console.log(`four 16 MiB command lines: peak RSS ${peakMb.toFixed(0)} MB over the start`);
    expect(peakMb).toBeLessThan(400);
  }, 90_000);
});

describe('what a gearmand can put in the log', () => {
  it('logMessage: one line, control characters (C0, DEL, C1), line separators and bidi controls escaped, 4 KiB at most', () => {
    expect(logMessage('a\nb\r\x1b[31m\x7f\x9b\u2028\u202e é')).toBe('a\\x0ab\\x0d\\x1b[31m\\x7f\\x9b\\u2028\\u202e é');
    expect(logMessage('clean')).toBe('clean');
    const long = logMessage('x'.repeat(1_000_000));
    expect(long).toBe(`${'x'.repeat(4096)}… (1000000 characters)`);
  });

  it('60 failing event handlers in a burst: at most 20 lines logged, then a count of those left out', async () => {
    const s = await startAgainst('normal', ['--eventhandler', '--max-worker=8']);
    const bad = () => codec.encode(formatJob({ type: 'eventhandler', hostName: 'h', commandLine: `/bin/false ${'Y'.repeat(5000)}` }));
    for (let i = 0; i < 60; i++) s.queue('eventhandler', bad());
    await waitUntil(() => s.completed.size === 60, 30_000, '60 event handlers done');
    const lines = worker!.log().split('\n').filter((l) => l.includes('eventhandler exited with return code'));
    expect(lines.length).toBeLessThanOrEqual(20);
    for (const l of lines) expect(l.length).toBeLessThan(1400);
  });

  it('40 ERROR packets of 1 MiB with newlines: a few bounded, escaped lines, no forged ones', async () => {
    const s = await startAgainst('normal');
    const forged = '\n[2026-12-01 00:00:00][1][INFO] reconfigured: forged line\n';
    for (let i = 0; i < 40; i++) s.sendToWorker(T.ERROR, ['E1', `${forged}${'x'.repeat(1024 * 1024)}`]);
    for (let i = 0; i < 10; i++) s.assignUnasked('host', `${forged}payload`);
    const handle = s.queue('host', codec.encode(hostJob('/bin/true')));
    await waitUntil(() => s.completed.has(handle), 10_000, 'a job after the flood');
    const log = worker!.log();
    console.log(`log after 40 MiB of ERROR text: ${log.length} bytes`);
    expect(log.length).toBeLessThan(64 * 1024);
    expect(log).not.toMatch(/^\[2026-12-01 00:00:00\]/m);
    expect(log).toMatch(/error: "E1": "\\n\[2026-12-01 00:00:00\]/);
    expect(worker!.alive).toBe(true);
  });
});

describe('a gearmand that stops reading', () => {
  it('status-queue answers respect backpressure: a flood of 12,000 status jobs keeps the worker small', async () => {
    const s = await startAgainst('normal', ['--max-worker=4']);
    await waitUntil(() => s.count(T.GRAB_JOB_UNIQ) + s.count(T.PRE_SLEEP) > 0, 5000, 'a grab');
    const before = worker!.statusKb('VmRSS');
    s.stopReading();
    // Each answer is 64 KiB (the C worker pads it): 12,000 of them are 786 MB.
    for (let i = 0; i < 12_000; i++) s.assignUnasked('worker_hard', '');
    await new Promise((r) => setTimeout(r, 3000));
    const peakMb = worker!.statusKb('VmHWM') / 1024;
    console.log(`status flood: RSS before ${(before / 1024).toFixed(0)} MB, peak ${peakMb.toFixed(0)} MB`);
    expect(worker!.alive).toBe(true);
    expect(peakMb).toBeLessThan(before / 1024 + 120);
    expect(worker!.log()).toMatch(/does not read/);
    // It dropped that connection and serves a new one.
    const handle = s.queue('host', codec.encode(hostJob('/bin/true')));
    await waitUntil(() => s.completed.has(handle), 15_000, 'a job on the new connection');
  }, 60_000);
});

/** Opens `n` TCP connections that never send a byte; closes them on dispose. */
async function idleConnections(port: number, n: number): Promise<net.Socket[]> {
  const socks: net.Socket[] = [];
  await Promise.all(Array.from({ length: n }, () => new Promise<void>((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => resolve());
    s.on('error', () => resolve());
    s.on('close', () => resolve());
    socks.push(s);
  })));
  return socks;
}

function scrape(port: number): Promise<number> {
  return new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    }).on('error', () => resolve(0));
  });
}

describe('the /metrics server under a connection flood', () => {
  it('1,100 idle metrics connections under ulimit -n 1024: jobs still run, fds stay bounded, scrapes work again', async () => {
    const port = await freePort();
    srv = new HostileGearmand('normal');
    const address = await srv.listen();
    worker = new WorkerProcess([`--server=${address}`, `--key=${KEY}`, '--hosts', '--identifier=fd', `--prometheus_server=127.0.0.1:${port}`],
      path.join(tmp, 'fd.log'), ['prlimit', '--nofile=1024:1024']);
    const s = srv;
    await waitUntil(() => s.count(T.CAN_DO) > 0, 10_000, 'the worker');
    await waitUntil(async () => (await scrape(port)) === 200, 10_000, 'metrics');
    const socks = await idleConnections(port, 1100);
    try {
      const fds = worker.openFds();
      expect(fds).toBeLessThan(200);
      for (let i = 0; i < 10; i++) s.queue('host', codec.encode(hostJob('/bin/true')));
      await waitUntil(() => s.results.length === 10, 20_000, '10 results');
      for (const r of results(s)) expect(r).toContain('return_code=0');
      // Idle connections are closed after the header timeout (5 s): a scraper gets through again.
      await waitUntil(async () => (await scrape(port)) === 200, 15_000, 'a scrape after the idle ones are dropped');
      console.log(`1,100 idle connections: worker held ${fds} fds`);
    } finally {
      for (const c of socks) c.destroy();
    }
  }, 60_000);

  it('noshell run under ulimit -n 1024 with 1,100 idle metrics connections: checks stay OK, not UNKNOWN "spawn EMFILE"', async () => {
    const port = await freePort();
    const file = path.join(tmp, 'checks.json');
    writeFileSync(file, JSON.stringify({ checks: [{ id: 'true', command: ['/bin/true'], interval: '200ms', ...(isRoot ? {} : {}) }] }));
    const run = spawn('prlimit', ['--nofile=1024:1024', process.execPath, CLI, 'run', file, '--metrics-port', String(port), ...(isRoot ? ['--allow-root'] : [])],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    run.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    try {
      await waitUntil(async () => (await scrape(port)) === 200, 10_000, 'noshell run metrics');
      const socks = await idleConnections(port, 1100);
      try {
        const seen = out.length;
        await new Promise((r) => setTimeout(r, 2000));
        const lines = out.slice(seen).split('\n').filter((l) => l.startsWith('{'));
        expect(lines.length).toBeGreaterThan(3);
        for (const l of lines) expect(JSON.parse(l)).toMatchObject({ stateName: 'OK' });
      } finally {
        for (const c of socks) c.destroy();
      }
    } finally {
      run.kill('SIGTERM');
      await new Promise((r) => run.once('exit', r));
    }
  }, 60_000);
});

describe('root', () => {
  it.runIf(isRoot)('refuses to run plugins as root without --allow-root (exit 2, says why)', () => {
    const r = spawnSync(process.execPath, [CLI, 'gearman-worker', '--server=127.0.0.1:1', '--encryption=no'], { encoding: 'utf8', timeout: 10_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/refusing to run as root.*--allow-root/s);
  });

  it.runIf(isRoot)('refuses root by its effective uid alone (real uid nobody, euid 0)', () => {
    const r = spawnSync('setpriv', [`--ruid=${NOBODY}`, '--euid=0', `--rgid=${NOBODY}`, '--clear-groups', process.execPath, CLI, 'gearman-worker',
      '--server=127.0.0.1:1', '--encryption=no'], { encoding: 'utf8', timeout: 10_000 });
    expect(r.stderr).toMatch(/refusing to run as root/);
    expect(r.status).toBe(2);
  });

  it.runIf(isRoot)('runs as an unprivileged user without --allow-root', async () => {
    const cli = path.join(path.dirname(unprivilegedPackage()), 'cli.js');
    // It dials a port with nothing on it until the SIGTERM, which it takes as a stop.
    const proc = spawn('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, cli, 'gearman-worker',
      '--server=127.0.0.1:1', '--encryption=no'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    await waitUntil(() => stderr.includes('serving') || proc.exitCode !== null, 10_000, 'the worker to start');
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).not.toMatch(/refusing/);
    expect(stderr).toMatch(/serving host, service, eventhandler, notification/);
    expect(stderr).toMatch(/SIGTERM: stopping/);
  });
});
