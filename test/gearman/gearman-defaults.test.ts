// The documented defaults, as behaviour, of every daemon and public class
// built with no options at all beyond what it cannot do without (issue 17:
// every earlier test passed its options explicitly, and the backoff and the
// answer deadline were off by default for months). Each one is measured
// against a peer on loopback; the slow ones run side by side.
import { rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GearmanClient } from '../../src/gearman/client';
import { GearmanConnection } from '../../src/gearman/protocol/connection';
import { GearmanWorker } from '../../src/gearman/worker/worker';
import { serveMetrics } from '../../src/metrics/serve/metrics-server';
import { Registry } from 'prom-client';
import { freePort, waitUntil } from '../fixtures/gearman/harness';
import { HostileGearmand } from '../fixtures/gearman/hostile-gearmand';
import { WorkerProcess } from '../fixtures/gearman/worker-process';
import os from 'node:os';

const warnings: string[] = [];
const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
process.on('warning', onWarning);
afterAll(() => {
  process.off('warning', onWarning);
});

function gaps(times: number[]): number[] {
  return times.slice(1).map((t, i) => t - times[i]);
}

describe.concurrent('defaults with no options', () => {
  it('GearmanConnection: reconnect backoff 100 ms doubling to 5 s against an accept-and-close peer', async () => {
    const srv = new HostileGearmand('accept-and-close');
    await srv.listen();
    const [host, port] = srv.address.split(':');
    const conn = new GearmanConnection({ host, port: Number(port) });
    conn.on('disconnect', () => {});
    conn.start();
    try {
      await waitUntil(() => srv.accepts.length >= 9, 25_000, '9 connection attempts');
    } finally {
      conn.close();
      await srv.close();
    }
    const g = gaps(srv.accepts.slice(0, 9));
    console.log(`backoff gaps (ms): ${g.map((x) => x.toFixed(0)).join(', ')}`);
    const want = [100, 200, 400, 800, 1600, 3200, 5000, 5000];
    g.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual(want[i] * 0.9);
      expect(ms).toBeLessThan(want[i] * 1.5 + 150);
    });
  }, 40_000);

  it('GearmanWorker({ servers, key }): a few dials in 3 s against an accept-and-close peer, not thousands; no TimeoutNaNWarning', async () => {
    const srv = new HostileGearmand('accept-and-close');
    const worker = new GearmanWorker({ servers: [await srv.listen()], key: 'k' }).start();
    await new Promise((r) => setTimeout(r, 3000));
    await worker.stop({ deadlineMs: 100, flushMs: 100 });
    await srv.close();
    // Two connections (jobs, results), each at 0, 0.1, 0.3, 0.7, 1.5 s and maybe 3.1 s.
    console.log(`accept-and-close peer: ${srv.accepts.length} dials in 3 s`);
    expect(srv.accepts.length).toBeGreaterThanOrEqual(6);
    expect(srv.accepts.length).toBeLessThanOrEqual(14);
    expect(warnings.filter((w) => w.includes('TimeoutNaN'))).toEqual([]);
  });

  it('GearmanWorker({ servers, key }) and the CLI with only --server/--key: a gearmand that never answers is dropped after 30 s', async () => {
    const lib = new HostileGearmand('silent');
    const cli = new HostileGearmand('silent');
    const worker = new GearmanWorker({ servers: [await lib.listen()], key: 'k' }).start();
    const logFile = path.join(os.tmpdir(), `noshell-defaults-${process.pid}.log`);
    const proc = new WorkerProcess([`--server=${await cli.listen()}`, '--key=k'], logFile);
    try {
      await waitUntil(() => lib.peerCloses.length > 0 && cli.peerCloses.length > 0, 40_000, 'both workers to give up on the silent peer');
      for (const s of [lib, cli]) {
        const held = s.peerCloses[0] - s.accepts[0];
        console.log(`silent peer held ${held.toFixed(0)} ms`);
        expect(held).toBeGreaterThan(29_000);
        expect(held).toBeLessThan(34_000);
      }
      expect(proc.log()).toMatch(/no answer for 3\d{4} ms to \d+ request\(s\); dropping the connection/);
    } finally {
      await worker.stop({ deadlineMs: 100, flushMs: 100 });
      await proc.dispose();
      rmSync(logFile, { force: true });
      await lib.close();
      await cli.close();
    }
  }, 50_000);

  it('GearmanClient(servers): keeps 10,000 results while no server is up, drops (and counts) the oldest past that', async () => {
    const port = await freePort();
    const client = new GearmanClient([{ host: '127.0.0.1', port }]).start();
    for (let i = 0; i < 10_010; i++) client.submit('check_results', `r${i}`);
    const s = client.stats();
    client.close();
    expect(s.queued).toBe(10_000);
    expect(s.dropped).toBe(10);
  });

  it('serveMetrics({ port }): at most 64 connections held, the rest closed at once; idle ones closed after 5 s', async () => {
    const registry = new Registry();
    const server = await serveMetrics(registry, { port: 0 });
    const port = Number(new URL(server.url).port);
    const closedAt: number[] = [];
    const t0 = performance.now();
    const socks = await Promise.all(Array.from({ length: 100 }, () => new Promise<net.Socket>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => resolve(s));
      s.on('error', () => {});
      s.on('close', () => closedAt.push(performance.now() - t0));
    })));
    try {
      await waitUntil(() => closedAt.length >= 36, 2000, '36 connections over the cap closed');
      expect(closedAt.filter((t) => t < 2000).length).toBe(36);
      await waitUntil(() => closedAt.length === 100, 10_000, 'the idle ones closed');
      const late = closedAt.slice(36);
      console.log(`idle metrics connections closed after ${Math.min(...late).toFixed(0)}–${Math.max(...late).toFixed(0)} ms`);
      expect(Math.min(...late)).toBeGreaterThan(4500);
      expect(Math.max(...late)).toBeLessThan(7500);
    } finally {
      for (const s of socks) s.destroy();
      await server.close();
    }
  }, 20_000);
});
