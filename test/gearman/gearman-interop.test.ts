// Interop with the real C Mod-Gearman peers (GPL-3.0 test peers, built by
// test/peers/build-mod-gearman.sh): the same jobs through the C
// mod_gearman_worker and through noshell's worker must give the same result
// payloads; send_gearman and check_gearman work against noshell.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GearmanClient } from '../../src/gearman/client';
import { parseServer } from '../../src/gearman/protocol/connection';
import { createPayloadCodec } from '../../src/gearman/payload/crypto';
import { formatJob, type JobType } from '../../src/gearman/payload/job-payload';
import { GearmanWorker } from '../../src/gearman/worker/worker';
import { parseCommand } from '../../src/command/parse-command';
import { fields, GEARMAND, Gearmand, peers, QueueReader, waitUntil } from '../fixtures/gearman/harness';

const PLUGIN = path.resolve(__dirname, '..', 'fixtures', 'gearman', 'plugin.sh');
const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const KEY = 'interopkey99';
const ID = 'peer';

const found = GEARMAND === null ? { env: null, error: 'gearmand is not installed' } : peers();
const skip = found.env === null;
if (skip) {
  // CI sets NOSHELL_REQUIRE_PEERS: there a missing peer is a failure, not a skip.
  if (process.env.NOSHELL_REQUIRE_PEERS) throw new Error(`Mod-Gearman peers are required here: ${found.error}`);
  console.warn(`skipped: Mod-Gearman interop tests: ${found.error}`);
}
const env = found.env ?? {};

function run(file: string, args: string[]): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const p = spawn(file, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    p.stdout!.on('data', (c) => (stdout += c));
    p.on('close', (status) => resolve({ status, stdout }));
  });
}

interface Job { type: JobType; command: string; timeout?: number }

// Jobs whose results are compared field by field between the C worker and ours; `dir` is a directory, run as a command.
const jobs = (dir: string): Job[] => [
  { type: 'service', command: `${PLUGIN} ok` },
  { type: 'service', command: `${PLUGIN} warn` },
  { type: 'host', command: `${PLUGIN} crit` },
  { type: 'service', command: `${PLUGIN} unknown` },
  { type: 'service', command: `${PLUGIN} multi` },
  { type: 'service', command: `${PLUGIN} stderr` },
  { type: 'service', command: `${PLUGIN} stderronly` },
  { type: 'service', command: '/usr/lib/nagios/plugins/check_dummy 1 "dummy warning"' },
  { type: 'service', command: `${PLUGIN} sleep 10`, timeout: 1 },
  { type: 'host', command: `${PLUGIN} sleep 10`, timeout: 1 },
  { type: 'service', command: '/nonexistent/check_nothing -w 1' },
  { type: 'service', command: dir },
  { type: 'service', command: `${PLUGIN} exit 7` },
  { type: 'service', command: `${PLUGIN} exit 126` },
  { type: 'service', command: `${PLUGIN} kill KILL` },
  { type: 'service', command: `${PLUGIN} kill TERM` },
  { type: 'service', command: `${PLUGIN} exit 1 | cat; echo "piped"` },
  { type: 'service', command: 'missing_plugin_in_path --x' },
  // argv proofs: the C worker runs these with /bin/sh (quotes, brackets, backslashes); noshell without.
  { type: 'service', command: `/usr/bin/printf '[%s]' 'a  b' "c\\"d" e\\\\f '' "" x'y'z '$HOME'` },
  { type: 'service', command: `/usr/bin/printf "<%s>" 'it''s' \\ lone "tab\there"` },
  { type: 'service', command: `/usr/bin/printf %s\\\\n one\\ two "three   four"` },
];

describe.skipIf(skip)('Mod-Gearman C peers against noshell', () => {
  let g: Gearmand;
  let client: GearmanClient;
  let reader: QueueReader;
  const codec = createPayloadCodec({ key: KEY });
  let seq = 0;
  // Made in beforeAll, removed in afterAll: a run that skips this block (a -t filter, no peers) runs neither hook,
  // and a directory made at collection was left behind.
  let tmp = '';
  let JOBS: Job[] = [];

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'noshell-gm-interop-'));
    JOBS = jobs(tmp);
    g = await Gearmand.start();
    client = new GearmanClient([parseServer(g.address)], { backoffMinMs: 50 }).start();
    reader = new QueueReader([g.address], 'check_results', codec);
  });
  afterAll(async () => {
    reader?.close();
    client?.close();
    await g?.dispose();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** Submits every job; returns result fields by job index. */
  async function runAll(tag: string): Promise<Array<Record<string, string>>> {
    const hosts = JOBS.map((j, i) => {
      const host = `${tag}-${i}-${++seq}`;
      const text = formatJob({ type: j.type, hostName: host, serviceDescription: j.type === 'service' ? `svc${i}` : undefined,
        commandLine: j.command, timeout: j.timeout ?? 10, coreTime: 1700000000.5 });
      client.submit(j.type, codec.encode(text), { priority: j.type === 'service' ? 'low' : 'normal' });
      return host;
    });
    const byHost = () => new Map(reader.payloads.map((p) => [fields(p).host_name, p]));
    await waitUntil(() => hosts.every((h) => byHost().has(h)), 25_000, `${tag} results`);
    const m = byHost();
    return hosts.map((h) => fields(m.get(h)!));
  }

  async function startC(): Promise<ChildProcess> {
    // setsid: the C worker signals its whole process group when it stops.
    const p = spawn(env.MG_WORKER, [`--server=${g.address}`, `--key=${KEY}`, `--identifier=${ID}`, '--min-worker=6',
      '--max-worker=6', '--spawn-rate=6', `--logfile=${path.join(tmp, 'cworker.log')}`], { detached: true, stdio: 'ignore' });
    return p;
  }
  async function stopC(p: ChildProcess): Promise<void> {
    if (p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    const t = setTimeout(() => {
      try {
        process.kill(-p.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 8000);
    await exited;
    clearTimeout(t);
  }

  it('same jobs, same result payloads: C mod_gearman_worker vs noshell worker', async () => {
    const c = await startC();
    let cResults: Array<Record<string, string>>;
    try {
      cResults = await runAll('c');
    } finally {
      await stopC(c);
    }
    const w = new GearmanWorker({ servers: [g.address], key: KEY, identifier: ID, maxWorker: 6 }).start();
    let ours: Array<Record<string, string>>;
    try {
      ours = await runAll('n');
    } finally {
      await w.stop({ deadlineMs: 2000 });
    }
    const diffs: string[] = [];
    for (let i = 0; i < JOBS.length; i++) {
      const { type, core_start_time: coreStart, start_time: start, finish_time: finish, host_name: _h, ...rest } = ours[i];
      const { core_start_time: _cs, start_time: cStart, finish_time: cFinish, host_name: _ch, ...cRest } = cResults[i];
      for (const k of new Set([...Object.keys(rest), ...Object.keys(cRest)])) {
        if (rest[k] !== cRest[k]) diffs.push(`${JOBS[i].command} ${k}: noshell ${JSON.stringify(rest[k])} C ${JSON.stringify(cRest[k])}`);
      }
      expect(type).toBe('active');
      expect(coreStart).toBe('1700000000.500000');
      for (const t of [start, finish, cStart, cFinish]) expect(t).toMatch(/^\d{10}\.\d{6}$/);
      // Same field order as the C worker, behind type=active.
      expect(Object.keys(ours[i]).slice(1)).toEqual(Object.keys(cResults[i]));
    }
    // The one deliberate difference: the C worker's timeout path sends source=(null) (its
    // alarm handler never sets it); noshell names the worker as for every other result.
    expect(diffs).toEqual(JOBS.filter((j) => j.timeout === 1).map((j) =>
      `${j.command} source: noshell "Mod-Gearman Worker @\u00a0${ID}" C "(null)"`));
    // The argv proofs ran without a shell here and gave what /bin/sh gave the C worker.
    for (const j of JOBS.slice(-3)) expect(parseCommand(j.command).needsShell).toBe(false);
    expect(ours.at(-3)!.output).toBe('[a  b][c"d][e\\\\f][][][xyz][$HOME]');
  }, 60_000);

  it('noshell gearman-submit → C worker: jobs run and results come back', async () => {
    const c = await startC();
    try {
      const r = spawnSync(process.execPath, [CLI, 'gearman-submit', `--server=${g.address}`, `--key=${KEY}`, '--type=host',
        '--host=from-noshell', `--command=${PLUGIN} warn`], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      await waitUntil(() => reader.payloads.some((p) => fields(p).host_name === 'from-noshell'), 15_000, 'C worker result');
      const f = fields(reader.payloads.find((p) => fields(p).host_name === 'from-noshell')!);
      expect(f).toMatchObject({ return_code: '1', output: 'WARNING - a bit\\n', source: `Mod-Gearman Worker @\u00a0${ID}` });
    } finally {
      await stopC(c);
    }
  }, 30_000);

  it('send_gearman results decode with noshell and match gearman-submit field by field', async () => {
    const args = [`--server=${g.address}`, `--key=${KEY}`, '--host=sg-host', '--service=sg svc', '--returncode=2',
      '--message=multi\nline C:\\path | x=1'];
    const before = reader.payloads.length;
    expect(spawnSync(env.MG_SEND_GEARMAN, args, { encoding: 'utf8' }).status).toBe(0);
    expect(spawnSync(process.execPath, [CLI, 'gearman-submit', ...args], { encoding: 'utf8' }).status).toBe(0);
    await reader.waitFor(before + 2);
    const [c, n] = reader.payloads.slice(before).map(fields);
    const strip = ({ start_time: _s, finish_time: _f, ...r }: Record<string, string>) => r;
    expect(strip(n)).toEqual(strip(c));
    expect(c).toMatchObject({ type: 'passive', output: 'multi\\nline C:\\\\path | x=1', return_code: '2' });
  });

  it('check_gearman -q worker_<id> -s check gets noshell\'s status answer', async () => {
    const w = new GearmanWorker({ servers: [g.address], key: KEY, identifier: 'nsstatus', maxWorker: 5 }).start();
    try {
      await waitUntil(() => w.stats().connected === 1, 5000, 'worker connected');
      // Asynchronously: the worker answering runs in this process.
      const r = await run(env.MG_CHECK_GEARMAN, ['-H', g.address, '-q', 'worker_nsstatus', '-s', 'check', '-t', '10']);
      expect(r.stdout).toMatch(/has 5 worker and is working on 0 jobs/);
      expect(r.status).toBe(0);
      const q = await run(env.MG_CHECK_GEARMAN, ['-H', g.address, '-t', '10']);
      expect(q.stdout).toMatch(/^check_gearman OK/);
    } finally {
      await w.stop();
    }
  });
});
