// GearmanWorker against a real gearmand: jobs in the broker module's format
// go in through our client, results are read from check_results.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GearmanClient } from '../../src/gearman/client';
import { GearmanConnection, parseServer } from '../../src/gearman/protocol/connection';
import { createPayloadCodec } from '../../src/gearman/payload/crypto';
import { formatJob, type JobType } from '../../src/gearman/payload/job-payload';
import { PacketType } from '../../src/gearman/protocol/packet';
import { executeJob } from '../../src/gearman/worker/execute-job';
import { JobPlans, runJob, type JobOutcome, type JobSettings } from '../../src/gearman/worker/run-job';
import { WorkerMetrics } from '../../src/gearman/worker/worker-metrics';
import { formatWorkerMetrics } from '../../src/metrics/text/gearman-worker-text';
import { GearmanWorker } from '../../src/gearman/worker/worker';
import { fields, GEARMAND, Gearmand, QueueReader, waitUntil } from '../fixtures/gearman/harness';

const PLUGIN = path.resolve(__dirname, '..', 'fixtures', 'gearman', 'plugin.sh');
const KEY = 'secretkey12';
const codec = createPayloadCodec({ key: KEY });

if (GEARMAND === null) {
  // CI sets NOSHELL_REQUIRE_PEERS: there a missing gearmand is a failure, not a skip.
  if (process.env.NOSHELL_REQUIRE_PEERS) throw new Error('gearmand is required here (apt-get install gearman-job-server)');
  console.warn('skipped: gearmand is not installed (apt-get install gearman-job-server)');
}

describe.skipIf(GEARMAND === null)('GearmanWorker with a real gearmand', () => {
  let g: Gearmand;
  let client: GearmanClient;
  let reader: QueueReader;
  let worker: GearmanWorker | null = null;
  const logs: string[] = [];
  let n = 0;
  // Made in beforeAll, removed in afterAll: a run that skips this block (a -t filter, no gearmand) runs neither hook,
  // and a directory made at collection was left behind.
  let tmp = '';

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'noshell-gm-worker-'));
    g = await Gearmand.start();
    client = new GearmanClient([parseServer(g.address)], { backoffMinMs: 50, backoffMaxMs: 300 }).start();
    reader = new QueueReader([g.address], 'check_results', codec);
  });
  afterEach(async () => {
    await worker?.stop({ deadlineMs: 2000 });
    worker = null;
  });
  afterAll(async () => {
    reader?.close();
    client?.close();
    await g?.dispose();
    rmSync(tmp, { recursive: true, force: true });
  });

  function startWorker(extra: Partial<ConstructorParameters<typeof GearmanWorker>[0]> = {}): GearmanWorker {
    worker = new GearmanWorker({
      servers: [g.address], key: KEY, identifier: 'nsw', maxWorker: 4, backoffMinMs: 50, backoffMaxMs: 300,
      log: (level, msg) => logs.push(`${level}: ${msg}`), ...extra,
    }).start();
    return worker;
  }

  /** Submits a job and returns the result fields for it (matched by host name). */
  function submit(type: JobType, command: string, o: { timeout?: number; queue?: string; raw?: string } = {}): string {
    const host = `h${++n}`;
    const text = formatJob({ type, hostName: host, serviceDescription: type === 'service' ? 'svc' : undefined,
      commandLine: command, timeout: o.timeout, coreTime: 1700000000.25 });
    client.submit(o.queue ?? type, o.raw ?? codec.encode(text), { priority: 'low' });
    return host;
  }
  async function result(host: string, ms = 10_000): Promise<Record<string, string>> {
    let found: Record<string, string> | undefined;
    await waitUntil(() => (found = reader.payloads.map(fields).find((f) => f.host_name === host)) !== undefined, ms, `result for ${host}`);
    return found!;
  }

  it('runs service and host checks and sends the C worker result fields', async () => {
    startWorker();
    const ok = submit('service', `${PLUGIN} ok`);
    const warn = submit('service', `${PLUGIN} warn`);
    const crit = submit('host', `${PLUGIN} crit`);
    const dummy = submit('service', '/usr/lib/nagios/plugins/check_dummy 3 "dummy said so"');
    const r = await result(ok);
    expect(Object.keys(r)).toEqual(['type', 'host_name', 'core_start_time', 'start_time', 'finish_time', 'return_code',
      'exited_ok', 'source', 'service_description', 'output']);
    expect(r).toMatchObject({ type: 'active', core_start_time: '1700000000.250000', return_code: '0', exited_ok: '1',
      source: 'Mod-Gearman Worker @\u00a0nsw', service_description: 'svc', output: 'OK - all good | time=0.1s;1;2;0\\n' });
    expect(Number(r.finish_time)).toBeGreaterThanOrEqual(Number(r.start_time));
    expect(Math.abs(Number(r.start_time) - Date.now() / 1000)).toBeLessThan(30);
    expect(await result(warn)).toMatchObject({ return_code: '1', output: 'WARNING - a bit\\n' });
    const c = await result(crit);
    expect(c).toMatchObject({ return_code: '2', output: 'CRITICAL - bad\\n' });
    expect(c.service_description).toBeUndefined();
    expect(await result(dummy)).toMatchObject({ return_code: '3', output: 'UNKNOWN: dummy said so\\n' });
  });

  it('escapes multi-line output with perfdata and backslashes; stderr in brackets', async () => {
    startWorker();
    const multi = submit('service', `${PLUGIN} multi`);
    const err = submit('service', `${PLUGIN} stderr`);
    const errOnly = submit('service', `${PLUGIN} stderronly`);
    expect((await result(multi)).output).toBe('OK - line one | a=1;2;3\\nsecond line C:\\\\new\\\\path\t"tab"\\nthird | b=2c\\nc=3\\n');
    expect(await result(err)).toMatchObject({ return_code: '1', output: 'out\\n\\n[some error] ' });
    expect(await result(errOnly)).toMatchObject({ return_code: '2', output: '[only err] ' });
  });

  it('timeouts, 126/127, out-of-range codes, signals and shell commands like the C worker', async () => {
    startWorker({ timeoutReturn: 3 });
    const t0 = Date.now();
    const slow = submit('service', `${PLUGIN} sleep 30`, { timeout: 1 });
    const slowHost = submit('host', `${PLUGIN} sleep 30`, { timeout: 1 });
    const missing = submit('service', '/nonexistent/check_nothing -w 1');
    const notExec = submit('service', `${tmp}`);
    const seven = submit('service', `${PLUGIN} exit 7`);
    const killed = submit('service', `${PLUGIN} kill KILL`);
    const shell = submit('service', `${PLUGIN} exit 1 | cat; echo "piped"`);
    expect(await result(slow)).toMatchObject({ return_code: '3', output: '(Service Check Timed Out On Worker: nsw)' });
    expect(await result(slowHost)).toMatchObject({ return_code: '3', output: '(Host Check Timed Out On Worker: nsw)' });
    expect(Date.now() - t0).toBeLessThan(6000);
    expect(await result(missing)).toMatchObject({ return_code: '2',
      output: "CRITICAL: Return code of 127 is out of bounds. Make sure the plugin you're trying to run actually exists. (worker: nsw)" });
    expect(await result(notExec)).toMatchObject({ return_code: '2',
      output: "CRITICAL: Return code of 126 is out of bounds. Make sure the plugin you're trying to run is executable. (worker: nsw)" });
    expect(await result(seven)).toMatchObject({ return_code: '2', output: 'CRITICAL: Return code of 7 is out of bounds. (worker: nsw)\\nexiting 7\\n' });
    expect(await result(killed)).toMatchObject({ return_code: '2',
      output: 'CRITICAL: Return code of 137 is out of bounds. Plugin exited by signal SIGKILL. (worker: nsw)\\nbefore\\n' });
    expect(await result(shell)).toMatchObject({ return_code: '0', output: 'exiting 1\\npiped\\n' });
    expect(worker!.metrics()).toMatch(/noshell_gearman_job_timeouts_total 2/);
    expect(worker!.metrics()).toMatch(/noshell_gearman_jobs_via_shell_total 1/);
  });

  it('runs at most max-worker jobs at once and grabs only with a free slot', async () => {
    const w = startWorker({ maxWorker: 2 });
    let peak = 0;
    const timer = setInterval(() => (peak = Math.max(peak, w.runningJobs)), 5);
    const hosts = Array.from({ length: 6 }, () => submit('host', `${PLUGIN} sleep 0.3`));
    const t0 = Date.now();
    for (const h of hosts) expect((await result(h)).return_code).toBe('0');
    clearInterval(timer);
    expect(peak).toBe(2);
    // 6 jobs of 0.3 s, two at a time: three rounds.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(850);
    expect(w.metrics()).toMatch(/noshell_gearman_jobs_total\{queue="host",result="ok"\} 6/);
  });

  it('a job with timeout over 2,147,483 s gets a normal result (timer clamped, not a RangeError)', async () => {
    startWorker();
    logs.length = 0;
    const huge = submit('service', `${PLUGIN} ok`, { timeout: 3_000_000 });
    const hugeHost = submit('host', `${PLUGIN} warn`, { timeout: 2_147_484 });
    expect(await result(huge)).toMatchObject({ return_code: '0', output: 'OK - all good | time=0.1s;1;2;0\\n' });
    expect(await result(hugeHost)).toMatchObject({ return_code: '1', output: 'WARNING - a bit\\n' });
    expect(logs.filter((l) => l.startsWith('error:'))).toEqual([]);
  });

  it('event handlers and notifications run and send no result', async () => {
    const w = startWorker();
    const out = path.join(tmp, 'handler.out');
    const before = reader.payloads.length;
    submit('eventhandler', `${PLUGIN} touch handled ${out}`);
    submit('notification', `${PLUGIN} touch notified ${out}`);
    await waitUntil(() => (w.metrics().match(/result="no_result"\} (\d+)/g) ?? []).length === 2, 10_000, 'two jobs without result');
    expect(readFileSync(out, 'utf8').split('\n').sort()).toEqual(['', 'handled', 'notified']);
    await new Promise((r) => setTimeout(r, 200));
    expect(reader.payloads.length).toBe(before);
  });

  it('notifications get the core\'s output in NAGIOS_SERVICEOUTPUT / NAGIOS_LONGSERVICEOUTPUT', async () => {
    const w = startWorker();
    const out = path.join(tmp, 'notify.env');
    const text = formatJob({ type: 'notification', hostName: 'nh', serviceDescription: 'ns', commandLine: `${PLUGIN} env ${out}`,
      extra: { contact: 'admin', plugin_output: 'CRITICAL - disk full', long_plugin_output: 'more detail' } });
    client.submit('notification', codec.encode(text), { priority: 'high' });
    await waitUntil(() => /queue="notification",result="no_result"\} 1/.test(w.metrics()), 10_000, 'notification run');
    expect(readFileSync(out, 'utf8')).toBe('out=CRITICAL - disk full long=more detail\n');
  });

  it('bad base64 → WORK_FAIL, wrong key / garbage / no command_line → discarded, each logged; the worker goes on', async () => {
    const w = startWorker();
    logs.length = 0;
    submit('service', '', { raw: 'this is %% not base64' });
    submit('service', '', { raw: createPayloadCodec({ key: 'wrongkey99' }).encode(formatJob({ type: 'service', hostName: 'x', commandLine: '/bin/true' })) });
    submit('service', '', { raw: codec.encode('type=service\nhost_name=nocmd\nresult_queue=check_results\n\n\n') });
    submit('service', '', { raw: createPayloadCodec({ encryption: false }).encode(formatJob({ type: 'service', hostName: 'clear', commandLine: '/bin/true' })) });
    const after = submit('service', `${PLUGIN} ok`);
    expect((await result(after)).return_code).toBe('0');
    await waitUntil(() => /result="discarded"\} 3/.test(w.metrics()), 5000, 'three discarded jobs');
    expect(w.metrics()).toMatch(/noshell_gearman_jobs_total\{queue="service",result="failed"\} 1/);
    expect(logs.filter((l) => l.startsWith('error:')).join('\n')).toMatch(/not valid base64[\s\S]*encryption settings[\s\S]*no command line/);
    expect(reader.payloads.map(fields).some((f) => f.host_name === 'nocmd' || f.host_name === 'clear')).toBe(false);
  });

  it('a server sending garbage or absurd lengths is dropped and retried; the real one keeps being served', async () => {
    let conns = 0;
    const sockets: net.Socket[] = [];
    const bad = net.createServer((sock) => {
      sockets.push(sock);
      sock.on('error', () => {});
      // Alternately: an HTTP answer (bad magic) and a header claiming a 4 GiB body.
      sock.write(conns++ % 2 === 0 ? 'HTTP/1.1 400 Bad Request\r\n\r\n' : Buffer.from('\0RES\0\0\0\x0a\xff\xff\xff\xff', 'latin1'));
    });
    await new Promise<void>((r) => bad.listen(0, '127.0.0.1', r));
    const badAddr = `127.0.0.1:${(bad.address() as net.AddressInfo).port}`;
    logs.length = 0;
    startWorker({ servers: [badAddr, g.address] });
    try {
      expect((await result(submit('service', `${PLUGIN} crit`))).return_code).toBe('2');
      await waitUntil(() => conns >= 3, 5000, 'reconnects to the bad server');
      const text = logs.join('\n');
      expect(text).toMatch(/bad Gearman magic[^\n]*dropping the connection/);
      expect(text).toMatch(/exceeds the limit[^\n]*dropping the connection/);
    } finally {
      await worker?.stop({ deadlineMs: 1000 });
      worker = null;
      for (const s of sockets) s.destroy();
      await new Promise((r) => bad.close(r));
    }
  });

  it('status queue worker_<identifier> answers like the C worker', async () => {
    startWorker();
    // A foreground SUBMIT_JOB, as check_gearman sends it, to read the answer.
    const c = new GearmanConnection(parseServer(g.address));
    const answer = await new Promise<Buffer>((resolve) => {
      c.on('connect', () => c.send(PacketType.SUBMIT_JOB, ['worker_nsw', 'check', '']));
      c.on('packet', (p) => p.type === PacketType.WORK_COMPLETE && resolve(p.args[1]));
      c.start();
    });
    c.close();
    expect(answer.length).toBe(65536);
    expect(answer.toString('latin1', 0, answer.indexOf(0))).toMatch(/^\S+ has 4 worker and is working on 0 jobs\. Version: 5\.2\.4-noshell\|worker=4;;;1;4 jobs=\d+c$/);
  });

  it('gearmand killed and restarted mid-run: no crash, results computed meanwhile arrive', async () => {
    const w = startWorker({ maxWorker: 3 });
    const hosts = [submit('host', `${PLUGIN} sleep 1`), submit('host', `${PLUGIN} sleep 1`), submit('host', `${PLUGIN} sleep 1`)];
    await waitUntil(() => w.runningJobs === 3, 5000, 'three running jobs');
    await g.stop('SIGKILL');
    await waitUntil(() => w.runningJobs === 0, 5000, 'jobs to finish without gearmand');
    expect(w.stats().resultsQueued).toBe(3);
    await new Promise((r) => setTimeout(r, 300));
    await g.start();
    for (const h of hosts) expect(await result(h, 10_000)).toMatchObject({ return_code: '0', output: 'slept 1\\n' });
    expect(w.stats().reconnects).toBeGreaterThanOrEqual(2);
    expect(w.stats().resultsDropped).toBe(0);
    // And it takes new jobs on the new server.
    expect((await result(submit('service', `${PLUGIN} warn`))).return_code).toBe('1');
    expect(w.metrics()).toMatch(/noshell_gearman_reconnects_total [1-9]/);
  });

  it('stop(): no new jobs, running jobs past the deadline are killed and their results sent', async () => {
    const w = startWorker();
    const slow = submit('service', `${PLUGIN} sleep 30`);
    await waitUntil(() => w.runningJobs === 1, 5000, 'running job');
    const t0 = Date.now();
    await w.stop({ deadlineMs: 300 });
    worker = null;
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(await result(slow)).toMatchObject({ return_code: '2',
      output: '(Return code of 15 is out of bounds. Worker exited by signal SIGTERM on worker: nsw)' });
  });
});

describe('executeJob', () => {
  it('always submits a result: an internal error becomes return code 3 with the reason', async () => {
    const sent: Array<[string, string]> = [];
    const logged: string[] = [];
    const ctx = {
      // A timeout no timer takes makes runJob throw a TypeError before spawning.
      options: { identifier: 'nsw', jobTimeout: Number.NaN, timeoutReturn: 2, showErrorOutput: true } as never,
      client: { submit: (q: string, d: string) => sent.push([q, d]) } as unknown as GearmanClient,
      codec: createPayloadCodec({ encryption: false }),
      metrics: new WorkerMetrics(),
      log: (level: string, m: string) => logged.push(`${level}: ${m}`),
    };
    const job = { type: 'service', hostName: 'hx', serviceDescription: 'svc', resultQueue: 'check_results',
      commandLine: '/bin/true', timeout: 0, knownKeys: 5 } as Parameters<typeof executeJob>[3];
    const event = await executeJob(ctx, 'service', 'H:1', job, new AbortController().signal, performance.now());
    expect(sent).toHaveLength(1);
    expect(sent[0][0]).toBe('check_results');
    const f = fields(ctx.codec.decode(sent[0][1]));
    expect(f).toMatchObject({ host_name: 'hx', service_description: 'svc', return_code: '3' });
    expect(f.output).toMatch(/^\(Error On Worker nsw: timeout must be a number of milliseconds/);
    expect(event.outcome.returnCode).toBe(3);
    expect(logged.join('\n')).toMatch(/error: job H:1 \(service\): internal error/);
    expect(formatWorkerMetrics(ctx.metrics, { maxWorker: 1, connected: 0, reconnects: 0, resultsSubmitted: 0, resultsQueued: 0, resultsDropped: 0 }))
      .toMatch(/queue="service",result="unknown"\} 1/);
  });
});

describe('runJob with the checked options kept (JobPlans)', () => {
  const base: JobSettings = { identifier: 'nsw', defaultTimeout: 60, timeoutReturn: 2, showErrorOutput: true, maxOutput: 10 * 1024 * 1024 };
  const job = (commandLine: string, timeout = 0, extra: object = {}) =>
    ({ type: 'service', hostName: 'h', serviceDescription: 's', resultQueue: 'check_results', commandLine, timeout, knownKeys: 5, ...extra }) as Parameters<typeof runJob>[0];
  const same = (o: JobOutcome) => ({ returnCode: o.returnCode, output: o.output, timedOut: o.timedOut, aborted: o.aborted, viaShell: o.viaShell, spawnError: o.spawnError });

  it('gives each job what runJob without them gives: output, codes, shell, notifications, a missing plugin', async () => {
    const plans = new JobPlans();
    const jobs = [
      job(`${PLUGIN} ok 'all good|t=1'`), job(`${PLUGIN} crit x`, 30), job(`${PLUGIN} exit 7`),
      job(`${PLUGIN} stderr`), job('/bin/echo $HOME | /bin/cat'), job('/nonexistent/plugin 1'),
      job('/bin/sh -c "echo $NAGIOS_SERVICEOUTPUT"', 0, { type: 'notification', pluginOutput: 'from the core' }),
      job(`${PLUGIN} ok again`),
    ];
    for (const j of jobs) {
      const planned = same(await runJob(j, { ...base, plans }));
      expect(planned).toEqual(same(await runJob(j, base)));
    }
    const notified = await runJob(jobs[6], { ...base, plans });
    expect(notified.returnCode).toBe(0);
  });

  it('each job keeps its own timeout, and a new signal is the one that aborts', async () => {
    const plans = new JobPlans();
    expect((await runJob(job('/bin/true', 5), { ...base, plans })).timedOut).toBe(false);
    const t0 = Date.now();
    const slow = await runJob(job('/bin/sleep 5', 1), { ...base, plans });
    expect(slow.timedOut).toBe(true);
    expect(slow.output).toBe('(Service Check Timed Out On Worker: nsw)');
    expect(Date.now() - t0).toBeLessThan(4000);
    // Longer than the 1 s timeout just used: the 5 s one must be back.
    expect((await runJob(job('/bin/sleep 1.5', 5), { ...base, plans })).timedOut).toBe(false);
    const first = new AbortController();
    expect((await runJob(job('/bin/true', 5), { ...base, plans, signal: first.signal })).aborted).toBe(false);
    const second = new AbortController();
    const running = runJob(job('/bin/sleep 4', 5), { ...base, plans, signal: second.signal });
    setTimeout(() => second.abort(), 100);
    const t1 = Date.now();
    expect((await running).aborted).toBe(true);
    expect(Date.now() - t1).toBeLessThan(3000);
  });

  it('options it refuses throw on every job, and 100 timeouts from the payloads each run with their own', async () => {
    const plans = new JobPlans();
    const bad = { ...base, defaultTimeout: Number.NaN, plans };
    await expect(runJob(job('/bin/true'), bad)).rejects.toThrow(/timeout must be a number of milliseconds/);
    await expect(runJob(job('/bin/true'), bad)).rejects.toThrow(/timeout must be a number of milliseconds/);
    const outcomes = await Promise.all(Array.from({ length: 100 }, (_, i) => runJob(job('/bin/true', 100 + i), { ...base, plans })));
    expect(outcomes.every((o) => o.returnCode === 0 && !o.timedOut)).toBe(true);
    // The first timeout's plan was evicted long ago; it is made again.
    expect((await runJob(job('/bin/sleep 3', 1), { ...base, plans })).timedOut).toBe(true);
  });
});
