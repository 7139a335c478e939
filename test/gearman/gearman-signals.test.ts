// Signals an operator's tools send `noshell gearman-worker` while jobs run:
// logrotate's daily SIGHUP (reload, reopen the log), a supervisor's SIGTERM
// and the impatient second one, and a storm of all of them. The worker must
// live through SIGHUP, finish what runs, deliver every result and leave no
// plugin behind.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPayloadCodec } from '../../src/gearman/payload/crypto';
import { formatJob } from '../../src/gearman/payload/job-payload';
import { PacketType as T } from '../../src/gearman/protocol/packet';
import { waitUntil } from '../fixtures/gearman/harness';
import { HostileGearmand } from '../fixtures/gearman/hostile-gearmand';
import { WorkerProcess } from '../fixtures/gearman/worker-process';
import { catches, isAlive } from '../helpers';

const KEY = 'signals-key';
const codec = createPayloadCodec({ key: KEY });
let tmp = '';
let plugin = '';
let srv: HostileGearmand | null = null;
let worker: WorkerProcess | null = null;

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-signals-'));
  // Writes its pid where the test can look for it afterwards (an orphan would still be there).
  plugin = path.join(tmp, 'slow.sh');
  writeFileSync(plugin, '#!/bin/sh\necho $$ >> "$1"\nsleep "$2"\necho "slept $2"\n');
  chmodSync(plugin, 0o755);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
afterEach(async () => {
  await worker?.dispose();
  worker = null;
  await srv?.close();
  srv = null;
});

function job(pidfile: string, seconds: number, type: 'host' | 'service' = 'service'): string {
  return codec.encode(formatJob({ type, hostName: 'h', serviceDescription: type === 'service' ? 's' : undefined, commandLine: `${plugin} ${pidfile} ${seconds}` }));
}

/** Whether process `pid` has `file` open. */
function holds(pid: number, file: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === file;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

function pids(file: string): number[] {
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(Number) : [];
}

function conf(file: string, lines: Record<string, string | number>): void {
  writeFileSync(file, Object.entries(lines).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
}

/** A scripted gearmand, and a worker whose config file names it and holds `lines`. */
async function start(confFile: string, logfile: string, lines: Record<string, string | number>): Promise<HostileGearmand> {
  srv = new HostileGearmand('normal');
  conf(confFile, { server: await srv.listen(), key: KEY, ...lines });
  worker = new WorkerProcess([`--config=${confFile}`], logfile);
  const s = srv;
  await waitUntil(() => s.count(T.CAN_DO) > 0, 10_000, 'the worker to announce its queues');
  return s;
}

describe('noshell gearman-worker and signals', () => {
  // Nothing can be done on a SIGKILL (or the OOM killer): the plugins die
  // with the worker all the same (cleanup, always on in the worker).
  it('SIGKILL with 3 jobs running: 0 plugins left 1 s later', async () => {
    const pidfile = path.join(tmp, 'kill.pids');
    const s = await start(path.join(tmp, 'kill.conf'), path.join(tmp, 'kill.log'), { services: 'yes', 'max-worker': 3 });
    for (let i = 0; i < 3; i++) s.queue('service', job(pidfile, 300));
    await waitUntil(() => pids(pidfile).length === 3, 10_000, 'the plugins to start');
    const w = worker!;
    try {
      w.signal('SIGKILL');
      await waitUntil(() => !w.alive, 5000, 'the worker to die');
      await new Promise((r) => setTimeout(r, 1000));
      expect(pids(pidfile).filter(isAlive)).toEqual([]);
    } finally {
      // Each plugin led its group: its `sleep` (not the plugin, so no death signal) is the test's to end.
      for (const pid of pids(pidfile)) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // the group is gone
        }
      }
    }
  }, 30_000);

  it('SIGHUP with a job running: reloads the config (queues, identifier, max-worker), reopens the rotated log, the job\'s result arrives', async () => {
    const cfg = path.join(tmp, 'hup.conf');
    const log = path.join(tmp, 'hup.log');
    const pidfile = path.join(tmp, 'hup.pids');
    srv = new HostileGearmand('normal');
    const address = await srv.listen();
    conf(cfg, { server: address, key: KEY, identifier: 'hup1', services: 'yes', 'max-worker': 2 });
    worker = new WorkerProcess([`--config=${cfg}`], log);
    const s = srv;
    await waitUntil(() => s.count(T.CAN_DO) > 0, 10_000, 'CAN_DO');
    expect(s.abilities().sort()).toEqual(['service', 'worker_hup1']);
    s.queue('service', job(pidfile, 1.5));
    await waitUntil(() => pids(pidfile).length === 1, 10_000, 'the plugin to start');
    // logrotate: move the log away, then signal (its postrotate runs systemctl condreload → SIGHUP).
    renameSync(log, `${log}.1`);
    conf(cfg, { server: address, key: KEY, identifier: 'hup2', services: 'yes', hosts: 'yes', 'max-worker': 3 });
    worker.signal('SIGHUP');
    await waitUntil(() => existsSync(log) && readFileSync(log, 'utf8').includes('reconfigured'), 10_000, 'the reload in the new log');
    expect(worker.alive).toBe(true);
    expect(readFileSync(log, 'utf8')).toMatch(/reconfigured: identifier, queues, maxWorker changed; 1 job running, left to finish/);
    await waitUntil(() => s.abilities().includes('worker_hup2'), 5000, 'the new abilities');
    expect(s.abilities().sort()).toEqual(['host', 'service', 'worker_hup2']);
    await waitUntil(() => s.results.length === 1, 10_000, 'the running job\'s result');
    expect(codec.decode(s.results[0].data)).toMatch(/return_code=0\n[^]*output=slept 1.5/);
    // The old file got no more lines after the rotation's SIGHUP.
    expect(readFileSync(`${log}.1`, 'utf8')).not.toMatch(/reconfigured/);
    // A config that no longer loads is logged; the worker runs on as it was.
    writeFileSync(cfg, 'server=\nbogus_option=1\n');
    worker.signal('SIGHUP');
    await waitUntil(() => readFileSync(log, 'utf8').includes('reload failed'), 5000, 'the failed reload logged');
    s.queue('host', job(pidfile, 0, 'host'));
    await waitUntil(() => s.results.length === 2, 10_000, 'a job after the failed reload');
    expect(worker.alive).toBe(true);
  }, 60_000);

  // Node leaves a signal at its default until a listener is added: a SIGHUP
  // before the worker's handlers were in ended it with 129 and no word. Its
  // start here is held open by a config file that is a FIFO whose writer has
  // not written yet.
  it('a SIGHUP during the start is not fatal: the worker starts, then reloads', async () => {
    const fifo = path.join(tmp, 'start.fifo');
    execFileSync('mkfifo', [fifo]);
    srv = new HostileGearmand('normal');
    const text = `server=${await srv.listen()}\nkey=${KEY}\nidentifier=start\n`;
    // A writer that has not written yet (O_RDWR: open without waiting for a reader): the worker's
    // start waits on its config, without blocking, for up to 10 s.
    const writer = openSync(fifo, 'r+');
    const logfile = path.join(tmp, 'start.log');
    try {
      worker = new WorkerProcess([`--config=${fifo}`], logfile);
      const w = worker;
      // Its config open, waiting for data: inside the start, whose signals are held.
      await waitUntil(() => holds(w.pid, fifo), 10_000, 'the worker to open its config');
      expect(catches(w.pid, 1)).toBe(true);
      w.signal('SIGHUP');
      writeSync(writer, text);
    } finally {
      closeSync(writer);
    }
    const w = worker;
    const s = srv;
    await waitUntil(() => s.count(T.CAN_DO) > 0, 10_000, 'the worker to announce its queues');
    await waitUntil(() => /SIGHUP[^\n]*: reloading the configuration/.test(w.log()), 10_000, 'the reload');
    // The reload does not wait for a writer: a pipe is read at start only.
    await waitUntil(() => w.log().includes('reload failed'), 10_000, 'the reload to give up on the pipe');
    expect(w.log()).toContain(`config file ${fifo} is a FIFO, not a regular file (a pipe is read at start only, not on a reload)`);
    expect(w.alive).toBe(true);
    w.signal('SIGTERM');
    expect(await w.exited).toEqual({ code: 0, signal: null });
  }, 60_000);

  // A process blocked reading a FIFO acts on no signal: a start that waited for a writer could
  // not be stopped by SIGTERM (outside review), and a reload held the event loop until one came.
  it('a config pipe no one writes: the start goes on at once (empty config, exit 2); a key file pipe is refused on reload, not waited for', async () => {
    const fifo = path.join(tmp, 'nowriter.fifo');
    execFileSync('mkfifo', [fifo]);
    const t = Date.now();
    const r = spawnSync(process.execPath, [path.join(__dirname, '..', '..', 'dist', 'cli.js'), 'gearman-worker', `--config=${fifo}`,
      ...(process.getuid?.() === 0 ? ['--allow-root'] : [])], { encoding: 'utf8', timeout: 20_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain('no server given');
    expect(Date.now() - t).toBeLessThan(5000);

    const keyfifo = path.join(tmp, 'key.fifo');
    execFileSync('mkfifo', [keyfifo]);
    srv = new HostileGearmand('normal');
    const address = await srv.listen();
    const keyWriter = openSync(keyfifo, 'r+');
    try {
      worker = new WorkerProcess([`--server=${address}`, `--keyfile=${keyfifo}`, '--identifier=keypipe'], path.join(tmp, 'keypipe.log'));
      const starting = worker;
      // Written once the worker has it open: data in a pipe no reader holds is dropped when its last end closes.
      await waitUntil(() => holds(starting.pid, keyfifo), 10_000, 'the worker to open its key file');
      writeSync(keyWriter, `${KEY}\n`);
    } finally {
      closeSync(keyWriter);
    }
    const w = worker;
    const s = srv;
    await waitUntil(() => s.count(T.CAN_DO) > 0, 10_000, 'the worker to announce its queues');
    w.signal('SIGHUP');
    await waitUntil(() => w.log().includes('reload failed'), 10_000, 'the reload to refuse the key pipe');
    expect(w.log()).toContain(`keyfile ${keyfifo} is a FIFO: read at start only, not on a reload`);
    w.signal('SIGTERM');
    expect(await w.exited).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('a config or key file that is a device is refused at once, naming what it is (it was read until memory ran out)', () => {
    for (const [arg, said] of [['--config=/dev/zero', 'config file /dev/zero is a character device, not a regular file'],
      ['--keyfile=/dev/zero', 'keyfile /dev/zero is a character device, not a regular file']]) {
      const r = spawnSync(process.execPath, [path.join(__dirname, '..', '..', 'dist', 'cli.js'), 'gearman-worker', '--server=127.0.0.1:1', arg,
        ...(process.getuid?.() === 0 ? ['--allow-root'] : [])],
        { encoding: 'utf8', timeout: 20_000 });
      expect(r.status, `${arg}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(said);
    }
  });

  it('a second SIGTERM (and a SIGINT) while stopping are absorbed: running jobs finish, results are sent, exit 0, no orphan', async () => {
    const cfg = path.join(tmp, 'term.conf');
    const pidfile = path.join(tmp, 'term.pids');
    const s = await start(cfg, path.join(tmp, 'term.log'), { identifier: 'term', services: 'yes', 'max-worker': 3 });
    for (let i = 0; i < 3; i++) s.queue('service', job(pidfile, 1.5));
    await waitUntil(() => pids(pidfile).length === 3, 10_000, 'three plugins running');
    worker!.signal('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    worker!.signal('SIGTERM');
    worker!.signal('SIGINT');
    worker!.signal('SIGHUP');
    const { code, signal } = await worker!.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(s.results.length).toBe(3);
    for (const r of s.results) expect(codec.decode(r.data)).toMatch(/return_code=0\n[^]*output=slept 1.5/);
    for (const pid of pids(pidfile)) expect(isAlive(pid)).toBe(false);
    const log = worker!.log();
    expect(log).toMatch(/SIGTERM: already stopping/);
    expect(log).toMatch(/SIGINT: already stopping/);
    expect(log).toMatch(/SIGHUP while stopping: ignored/);
  }, 60_000);

  it('a SIGHUP/SIGTERM storm while jobs run: alive through 30 SIGHUPs, every result delivered, no orphan, memory bounded', async () => {
    const cfg = path.join(tmp, 'storm.conf');
    const pidfile = path.join(tmp, 'storm.pids');
    const s = await start(cfg, path.join(tmp, 'storm.log'), { identifier: 'storm', services: 'yes', 'max-worker': 4 });
    const rss0 = worker!.statusKb('VmRSS');
    for (let i = 0; i < 12; i++) s.queue('service', job(pidfile, 0.3));
    for (let i = 0; i < 30; i++) {
      worker!.signal('SIGHUP');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(worker!.alive).toBe(true);
    await waitUntil(() => s.results.length === 12, 20_000, '12 results through the SIGHUPs');
    for (let i = 0; i < 4; i++) s.queue('service', job(pidfile, 1));
    await waitUntil(() => pids(pidfile).length === 16, 10_000, 'four more running');
    const rss1 = worker!.statusKb('VmRSS');
    for (let i = 0; i < 10; i++) {
      worker!.signal(i % 2 === 0 ? 'SIGTERM' : 'SIGHUP');
      await new Promise((r) => setTimeout(r, 10));
    }
    const { code } = await worker!.exited;
    expect(code).toBe(0);
    expect(s.results.length).toBe(16);
    for (const pid of pids(pidfile)) expect(isAlive(pid)).toBe(false);
    console.log(`storm: RSS ${(rss0 / 1024).toFixed(0)} MB at start, ${(rss1 / 1024).toFixed(0)} MB after 30 reloads and 12 jobs`);
    expect(rss1 - rss0).toBeLessThan(60 * 1024);
  }, 60_000);
});

describe('GearmanWorker.reconfigure', () => {
  // Before: the old connection was closed at once, and gearmand gives the jobs a closed
  // connection held to another worker: the check ran twice and two results were posted.
  it('moves to another gearmand: the old connection takes no new job, answers the one it handed out, then closes; the result goes to the new one', async () => {
    const { GearmanWorker } = await import('../../src/gearman/worker/worker');
    const a = new HostileGearmand('normal');
    const b = new HostileGearmand('normal');
    const pidfile = path.join(tmp, 'move.pids');
    const w = new GearmanWorker({ servers: [await a.listen()], key: KEY, services: true, identifier: 'move' }).start();
    try {
      await waitUntil(() => a.count(T.CAN_DO) > 0, 5000, 'CAN_DO on a');
      const handle = a.queue('service', job(pidfile, 1));
      await waitUntil(() => pids(pidfile).length === 1, 5000, 'the job on a');
      const r = w.reconfigure({ servers: [await b.listen()], key: KEY, services: true, identifier: 'move' });
      expect(r).toEqual({ changed: ['servers'], serversAdded: [b.address], serversRemoved: [a.address] });
      // While the job runs: its abilities withdrawn, its connection still open, a new job of a's not taken.
      await waitUntil(() => a.count(T.RESET_ABILITIES) > 0, 5000, 'RESET_ABILITIES on a');
      a.queue('service', job(pidfile, 0));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(a.completed.has(handle)).toBe(false);
      expect(a.openConnections).toBeGreaterThan(0);
      await waitUntil(() => b.results.length === 1, 10_000, 'the running job\'s result on b');
      // Its answer goes to a, the gearmand that handed it out, and only then the connection closes.
      await waitUntil(() => a.completed.has(handle), 5000, 'WORK_COMPLETE on a');
      await waitUntil(() => a.openConnections === 0, 5000, 'both connections to a closed');
      expect(pids(pidfile)).toHaveLength(1);
      b.queue('service', job(pidfile, 0));
      await waitUntil(() => b.results.length === 2, 10_000, 'a job from b');
      expect(a.results.length).toBe(0);
      expect(() => w.reconfigure({ servers: [], key: KEY })).toThrow(TypeError);
      expect(w.options.servers.map((s) => `${s.host}:${s.port}`)).toEqual([b.address]);
    } finally {
      await w.stop({ deadlineMs: 2000, flushMs: 1000 });
      await a.close();
      await b.close();
    }
  });
});
