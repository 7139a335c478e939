// noshell run scraped by a real Prometheus (Debian's prometheus package) on
// a free loopback port, with a throwaway config and data dir; the series are
// read back through its HTTP API.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers';
import { promtoolCheck, requirePeer } from './metrics-text';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const PLUGINS = '/usr/lib/nagios/plugins';
// Made in beforeAll: a run whose -t filter skips every test here runs neither hook, and a directory made at collection was left behind.
let tmp = '';
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-prometheus-'));
});
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : null)));
  rmSync(tmp, { recursive: true, force: true });
});
const havePeers = requirePeer('prometheus', 'prometheus') && requirePeer(`${PLUGINS}/check_users`, 'monitoring-plugins-basic');
const ODD_ID = 'odd "id" back\\slash\nnew line ü 😀,label:x';

interface Started {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

function start(file: string, args: string[]): Started {
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, out: () => out, err: () => err, exited };
}

function runCli(checks: unknown[], extra: string[] = []): Started {
  const file = path.join(tmp, `checks-${children.length}.json`);
  writeFileSync(file, JSON.stringify({ checks }));
  const root = process.getuid?.() === 0 ? ['--allow-root'] : [];
  return start(process.execPath, [CLI, 'run', file, '--metrics-port', '0', ...root, ...extra]);
}

async function metricsUrl(cli: Started): Promise<URL> {
  expect(await waitFor(() => /metrics on (\S+)/.test(cli.err()), 15_000), cli.err()).toBe(true);
  return new URL(/metrics on (\S+)/.exec(cli.err())![1]);
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

function script(name: string, body: string): string {
  const file = path.join(tmp, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

interface Series {
  metric: Record<string, string>;
  value?: [number, string];
  values?: Array<[number, string]>;
}

async function query(base: string, q: string): Promise<Series[]> {
  const res = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(q)}`);
  const body = (await res.json()) as { status: string; data: { result: Series[] }; error?: string };
  if (body.status !== 'success') throw new Error(`${q}: ${body.error}`);
  return body.data.result;
}

/** Polls a query until `ok` holds for its result; returns that result. */
async function until(base: string, q: string, ok: (r: Series[]) => boolean, ms = 20_000): Promise<Series[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    let r: Series[] = [];
    try {
      r = await query(base, q);
      if (ok(r)) return r;
    } catch (e) {
      // Prometheus is still starting (connection refused) — or a real error,
      // reported once the deadline has passed.
      if (Date.now() > deadline) throw e;
    }
    if (Date.now() > deadline) throw new Error(`${q}: gave ${JSON.stringify(r)}`);
    await new Promise((res) => setTimeout(res, 250));
  }
}

async function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, host);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function stop(p: Started): Promise<number | null> {
  p.child.kill('SIGTERM');
  return p.exited;
}

describe.runIf(havePeers)('a real Prometheus scrapes noshell run', () => {
  it('finds each check\'s state, OK → CRITICAL → OK, perfdata as the plugins printed it, odd ids, a bounded churning label', async () => {
    const stateFile = path.join(tmp, 'flip-state');
    writeFileSync(stateFile, '0');
    const churnCount = path.join(tmp, 'churn-count');
    writeFileSync(churnCount, '0');
    const labels30 = Array.from({ length: 30 }, (_, i) => `l${i}_$n=$n`).join(' ');
    const cli = runCli([
      // The first check runs at once; the others within a fraction of their interval.
      { id: 'load', command: [`${PLUGINS}/check_load`, '-w', '50,40,30', '-c', '100,80,60'], interval: '60s' },
      { id: 'users', command: [`${PLUGINS}/check_users`, '-w', '1000', '-c', '2000'], interval: '60s' },
      { id: ODD_ID, command: ['/usr/bin/printf', "OK - x | 'odd label'=12ms;10;20;0;100 bytes=3KB 'q\"\\\\ ü'=5\\n"], interval: '1s' },
      { id: 'flip', command: [script('flip.sh', `s=$(cat '${stateFile}'); echo "STATE $s | s=$s"; exit "$s"`)], interval: '300ms' },
      // 30 labels no run printed before, every run: the cap (100 label sets) must hold.
      { id: 'churn', command: [script('churn.sh', `n=$(( $(cat '${churnCount}') + 1 )); echo $n > '${churnCount}'; echo "OK | ${labels30}"`)], interval: '500ms' },
    ]);
    const url = await metricsUrl(cli);
    // Loopback only, unless --metrics-host says otherwise.
    expect(url.hostname).toBe('127.0.0.1');
    expect(await connects('127.0.0.2', Number(url.port))).toBe(false);

    const promPort = await freePort();
    const base = `http://127.0.0.1:${promPort}`;
    const config = path.join(tmp, 'prometheus.yml');
    writeFileSync(config, [
      'global:', '  scrape_interval: 1s', '  scrape_timeout: 1s',
      'scrape_configs:', '  - job_name: noshell', '    static_configs:', `      - targets: ['${url.host}']`, '',
    ].join('\n'));
    const prom = start('prometheus', [
      `--config.file=${config}`, `--storage.tsdb.path=${path.join(tmp, 'data')}`, `--web.listen-address=127.0.0.1:${promPort}`,
      '--log.level=warn',
    ]);
    try {
      await until(base, 'up{job="noshell"}', (r) => r.length === 1 && r[0].value![1] === '1');

      // OK → CRITICAL → OK, from a file the plugin reads.
      for (const s of ['0', '2', '0']) {
        writeFileSync(stateFile, s);
        await until(base, 'noshell_check_state{check="flip"}', (r) => r.length === 1 && r[0].value![1] === s);
      }
      const history = (await query(base, 'noshell_check_state{check="flip"}[2m]'))[0].values!.map((v) => v[1]);
      expect(history.filter((v, i) => i === 0 || v !== history[i - 1])).toEqual(['0', '2', '0']);
      const hard = await query(base, 'noshell_check_state_type{check="flip"}');
      expect(hard[0].value![1]).toBe('1');

      // The odd id and label come back exact, by listing and by a PromQL matcher.
      const odd = (await until(base, 'noshell_check_perfdata', (r) => r.some((s) => s.metric.check === ODD_ID)))
        .filter((s) => s.metric.check === ODD_ID);
      // An empty label value is no label to Prometheus: unitless items have no uom.
      const byLabel = Object.fromEntries(odd.map((s) => [s.metric.label, [s.value![1], s.metric.uom ?? '']]));
      expect(byLabel).toEqual({ 'odd label': ['0.012', 's'], bytes: ['3072', 'B'], 'q"\\ ü': ['5', ''] });
      const matched = await query(base, `noshell_check_perfdata_warn{check=${JSON.stringify(ODD_ID)},label="odd label",bound="high"}`);
      expect(matched.map((s) => s.value![1])).toEqual(['0.01']);

      // Real plugins: the values their one run printed (JSON lines on stdout).
      const lines = () => cli.out().trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
      for (const id of ['load', 'users']) {
        const got = await until(base, `noshell_check_perfdata{check="${id}"}`, (r) => r.length > 0);
        const result = lines().filter((l) => l.id === id);
        expect(result).toHaveLength(1);
        expect(result[0].perfdata.length).toBeGreaterThan(0);
        for (const p of result[0].perfdata) {
          const s = got.find((g) => g.metric.label === p.label);
          expect(s, `${id} ${p.label}`).toBeDefined();
          expect(Number(s!.value![1])).toBe(p.value);
        }
        expect((await query(base, `noshell_check_state{check="${id}"}`))[0].value![1]).toBe(String(result[0].state));
      }

      // The churning check: 30 new labels a run, never more than 100 label sets.
      await until(base, 'noshell_check_perfdata_dropped_total{check="churn",reason="limit"}', (r) => r.length === 1 && Number(r[0].value![1]) > 0);
      const held = await query(base, 'noshell_check_perfdata_label_sets{check="churn"}');
      expect(held[0].value![1]).toBe('100');
      const ever = await query(base, 'count(count by (label) (count_over_time(noshell_check_perfdata{check="churn"}[5m])))');
      expect(Number(ever[0].value![1])).toBeLessThanOrEqual(100);
      expect(Number(ever[0].value![1])).toBeGreaterThan(30);

      // prom-client's default metrics, event-loop lag included, and summaries with _count.
      for (const q of ['nodejs_eventloop_lag_seconds', 'process_cpu_user_seconds_total', 'noshell_check_execution_seconds_count']) {
        expect((await query(base, `${q}{job="noshell"}`)).length, q).toBe(1);
      }
    } finally {
      prom.child.kill('SIGTERM');
      await prom.exited;
      expect(await stop(cli)).toBe(143);
    }
  }, 60_000);

  it("promtool check metrics passes the whole page: the runner's series and prom-client's defaults", async () => {
    const cli = runCli([
      { id: 'ok', command: [`${PLUGINS}/check_dummy`, '0', 'fine | rta=1.5ms;5;10;0 pl=0%;20;60 size=12KB'], interval: '10s' },
      { id: ODD_ID, command: [`${PLUGINS}/check_dummy`, '2', 'bad | v=U'], interval: '10s' },
    ]);
    const url = await metricsUrl(cli);
    expect(await waitFor(() => cli.out().trim().split('\n').length >= 2, 15_000), cli.err()).toBe(true);
    const body = await (await fetch(url)).text();
    expect(body).toMatch(/^nodejs_active_handles\{/m);
    expect(body).toMatch(/^noshell_check_perfdata\{/m);
    // prom-client's nodejs_active_{handles,requests,resources}_total are gauges named as counters: left out.
    expect(body).not.toMatch(/^nodejs_active_\w+_total/m);
    const lint = promtoolCheck(body);
    expect(lint.output).toBe('');
    expect(lint.status).toBe(0);
    expect(await stop(cli)).toBe(143);
  });

  it('--metrics-host binds the address asked for', async () => {
    const cli = runCli([{ id: 'ok', command: [`${PLUGINS}/check_dummy`, '0', 'fine'], interval: '10s' }], ['--metrics-host', '127.0.0.2']);
    const url = await metricsUrl(cli);
    expect(url.hostname).toBe('127.0.0.2');
    const body = await (await fetch(url)).text();
    expect(body).toMatch(/^noshell_checks 1$/m);
    expect(await connects('127.0.0.1', Number(url.port))).toBe(false);
    expect(await stop(cli)).toBe(143);
  });
});
