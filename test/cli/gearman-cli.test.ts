// noshell gearman-worker / gearman-submit as processes: the C worker's option
// names, worker.conf, SIGTERM, metrics.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerOptionsFromArgs } from '../../src/cli/gearman-worker-command';
import { createPayloadCodec } from '../../src/gearman/payload/crypto';
import { fields, freePort, GEARMAND, Gearmand, QueueReader } from '../fixtures/gearman/harness';
import { promtoolCheck } from '../metrics/metrics-text';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const PLUGIN = path.resolve(__dirname, '..', 'fixtures', 'gearman', 'plugin.sh');
// Made in beforeAll: a run whose -t filter skips every test here runs neither hook, and a directory made at collection was left behind.
let tmp = '';
beforeAll(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'noshell-gm-cli-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function cli(args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 20_000 });
}

describe('gearman-worker options (C names, worker.conf)', () => {
  it('reads worker.conf with comments, includes and both argument forms', () => {
    const inc = path.join(tmp, 'inc.conf');
    writeFileSync(inc, 'max-worker=7\n');
    const conf = path.join(tmp, 'worker.conf');
    writeFileSync(conf, `# Mod-Gearman worker config\nserver=127.0.0.1:4731,127.0.0.2\nencryption=yes\nkey=abc12345  # trailing\n` +
      `identifier=box1\nservices=yes\nhosts=no\nhostgroups=web, db\nservicegroup=disk\ntimeout_return=3\nshow_error_output=no\n` +
      `load_limit1=50\ninclude=${inc}\npidfile=/run/x.pid\n`);
    const r = workerOptionsFromArgs([`--config=${conf}`, '--server', 'gm3:4730', '--eventhandler', '--job_timeout', '30']);
    expect(r.options).toMatchObject({
      servers: ['127.0.0.1:4731', '127.0.0.2', 'gm3:4730'], encryption: true, key: 'abc12345', identifier: 'box1',
      services: true, hosts: false, eventhandlers: true, hostgroups: ['web', 'db'], servicegroups: ['disk'],
      timeoutReturn: 3, showErrorOutput: false, loadLimit1: 50, maxWorker: 7, jobTimeout: 30,
    });
    expect(r.warnings.join('\n')).toMatch(/pidfile is ignored/);
    // Options the command line does not set are left out, not set to undefined (issue 17).
    expect(Object.entries(r.options).filter(([, v]) => v === undefined)).toEqual([]);
  });

  it('unknown and unsupported options are errors naming the option', () => {
    expect(() => workerOptionsFromArgs(['--server=x', '--key=k', '--frobnicate=1'])).toThrow(/unknown option --frobnicate/);
    expect(() => workerOptionsFromArgs(['--server=x', '--key=k', '--frobnicate', '1'])).toThrow(/unknown option --frobnicate/);
    expect(() => workerOptionsFromArgs(['--server=x', '--key=k', '--restrict_path=/usr'])).toThrow(/restrict_path is not supported/);
    expect(() => workerOptionsFromArgs(['--key=k'])).toThrow(/no server/);
    expect(() => workerOptionsFromArgs(['--server=x'])).toThrow(/no key/);
    expect(() => workerOptionsFromArgs(['--server=x', '--key=k', '--max-worker=none'])).toThrow(/max-worker must be a number/);
    const r = cli(['gearman-worker', '--server=127.0.0.1:1', '--key=k', '--bogus']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown option --bogus/);
  });

  // A key file that is missing or not a file: one line naming it, exit 2, as
  // every other bad option (a stack trace and exit 1 before).
  it.each([
    ['gearman-submit', ['--host=h', '--message=x']],
    ['gearman-worker', ['--allow-root']],
  ])('%s with a key file it cannot read says so in one line, exit 2', (command, extra) => {
    for (const [file, why] of [['/nonexistent/key', /keyfile \/nonexistent\/key cannot be read \(ENOENT/], ['/', /keyfile \/ is a directory, not a regular file/]] as const) {
      const r = cli([command, '--server=127.0.0.1:1', `--keyfile=${file}`, ...extra]);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(why);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});

if (GEARMAND === null) {
  // CI sets NOSHELL_REQUIRE_PEERS: there a missing gearmand is a failure, not a skip.
  if (process.env.NOSHELL_REQUIRE_PEERS) throw new Error('gearmand is required here (apt-get install gearman-job-server)');
  console.warn('skipped: gearmand is not installed (apt-get install gearman-job-server)');
}

describe.skipIf(GEARMAND === null)('noshell gearman-worker and gearman-submit processes', () => {
  let g: Gearmand;
  let proc: ChildProcess | null = null;
  let reader: QueueReader;
  const codec = createPayloadCodec({ key: 'clikey1234' });

  beforeAll(async () => {
    g = await Gearmand.start();
    reader = new QueueReader([g.address], 'check_results', codec);
  });
  afterAll(async () => {
    if (proc !== null && proc.exitCode === null) proc.kill('SIGKILL');
    reader?.close();
    await g?.dispose();
  });

  it('runs jobs submitted by gearman-submit, serves metrics, and stops cleanly on SIGTERM', async () => {
    const metricsPort = await freePort();
    const keyfile = path.join(tmp, 'key');
    writeFileSync(keyfile, 'clikey1234\n');
    const conf = path.join(tmp, 'cli-worker.conf');
    const log = path.join(tmp, 'worker.log');
    writeFileSync(conf, `server=${g.address}\nkeyfile=${keyfile}\nidentifier=cliw\nmax-worker=2\nlogfile=${log}\n` +
      `prometheus_server=127.0.0.1:${metricsPort}\n${process.getuid?.() === 0 ? 'allow_root=yes\n' : ''}`);
    proc = spawn(process.execPath, [CLI, 'gearman-worker', '--config', conf, '--debug=1'], { stdio: 'ignore' });
    const sub = cli(['gearman-submit', `--server=${g.address}`, '--key', 'clikey1234', '--type=service', '--host=ch',
      '--service=cs', `--command=${PLUGIN} warn`]);
    expect(sub.stderr).toBe('');
    expect(sub.status).toBe(0);
    await reader.waitFor(1);
    const r = fields(reader.payloads[0]);
    expect(r).toMatchObject({ type: 'active', host_name: 'ch', service_description: 'cs', return_code: '1',
      source: 'Mod-Gearman Worker @\u00a0cliw', output: 'WARNING - a bit\\n' });
    const metrics = await new Promise<string>((resolve, reject) => {
      http.get(`http://127.0.0.1:${metricsPort}/metrics`, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve(body));
      }).on('error', reject);
    });
    expect(metrics).toMatch(/noshell_gearman_jobs_total\{queue="service",result="warning"\} 1/);
    expect(metrics).toMatch(/noshell_gearman_max_worker 2/);
    expect(promtoolCheck(metrics)).toEqual({ status: 0, output: '' });
    // A passive result in send_gearman's format, message from stdin.
    const passive = spawnSync(process.execPath, [CLI, 'gearman-submit', `--server=${g.address}`, '--key=clikey1234',
      '--host=ph', '--service=ps', '-r', '2'], { input: 'line1\nline2 C:\\x\n', encoding: 'utf8' });
    expect(passive.status).toBe(0);
    await reader.waitFor(2);
    expect(fields(reader.payloads[1])).toMatchObject({ type: 'passive', host_name: 'ph', service_description: 'ps',
      return_code: '2', source: 'send_gearman', output: 'line1\\nline2 C:\\\\x\\n' });
    const exited = new Promise<number | null>((resolve) => proc!.once('exit', (code) => resolve(code)));
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    const text = readFileSync(log, 'utf8');
    expect(text).toMatch(/connected to gearmand/);
    expect(text).toMatch(/SIGTERM: stopping/);
    expect(text).toMatch(/stopped after 1 job /);
  });

  it('gearman-submit reports a server that never answers', async () => {
    const port = await freePort();
    const t0 = Date.now();
    const r = cli(['gearman-submit', `--server=127.0.0.1:${port}`, '--encryption=no', '--host=h', '--returncode=0', '--message=x', '--wait=1']);
    expect(r.status).toBe(2);
    expect(r.stdout).toMatch(/no Gearman server took the job/);
    expect(Date.now() - t0).toBeLessThan(6000);
  });
});
