// GearmanClient and GearmanConnection against fake TCP peers (no gearmand
// needed): bounded memory against a server that never reads, reconnect
// backoff against peers that accept and then fail, stalled partial packets.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GearmanClient } from '../../src/gearman/client';
import { GearmanConnection } from '../../src/gearman/protocol/connection';
import { WRITE_HIGH_WATER_MARK } from '../../src/gearman/protocol/connection-options';
import { encodePacket, PacketParser, PacketType } from '../../src/gearman/protocol/packet';
import { waitUntil } from '../fixtures/gearman/harness';

const cleanup: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function fakeServer(onSocket: (s: net.Socket) => void, opts: net.ServerOpts = {}): Promise<{ port: number; sockets: net.Socket[] }> {
  const sockets: net.Socket[] = [];
  const server = net.createServer(opts, (s) => {
    sockets.push(s);
    s.on('error', () => {});
    onSocket(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { port: (server.address() as net.AddressInfo).port, sockets };
}

const tick = () => new Promise((r) => setTimeout(r, 10));

describe('GearmanClient against a server that accepts and never reads', () => {
  it('client queue bound applies to in-flight jobs: window, write backpressure, bytes bound, drops counted', async () => {
    const srv = await fakeServer(() => {}, { pauseOnConnect: true });
    const client = new GearmanClient([{ host: '127.0.0.1', port: srv.port }], {
      maxQueued: 1000, maxQueuedBytes: 1024 * 1024, maxInFlight: 100, backoffMinMs: 50,
    }).start();
    cleanup.push(() => client.close());
    await waitUntil(() => srv.sockets.length === 1, 5000, 'the client to connect');
    await tick();
    const jobs = 50_000;
    const data = 'x'.repeat(1024);
    const rss0 = process.memoryUsage().rss;
    let peakInFlight = 0;
    let peakBytes = 0;
    for (let i = 0; i < jobs; i++) {
      client.submit('check_results', data);
      if (i % 500 === 0) {
        await tick();
        const s = client.stats();
        peakInFlight = Math.max(peakInFlight, s.inFlight);
        peakBytes = Math.max(peakBytes, s.bytes);
      }
    }
    await tick();
    const s = client.stats();
    const rss = process.memoryUsage().rss - rss0;
    console.log(`never-reading server, ${jobs} jobs of 1 KiB: ${JSON.stringify(s)}, peak inFlight ${peakInFlight}, ` +
      `peak bytes ${peakBytes}, RSS +${(rss / 1048576).toFixed(1)} MiB`);
    expect(peakInFlight).toBeLessThanOrEqual(100);
    expect(s.inFlight).toBeLessThanOrEqual(100);
    expect(s.queued + s.inFlight).toBeLessThanOrEqual(1000);
    expect(peakBytes).toBeLessThanOrEqual(1024 * 1024);
    expect(s.bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(s.submitted).toBe(0);
    // Everything not held is counted as dropped.
    expect(s.dropped).toBe(jobs - s.queued - s.inFlight);

    // The server starts reading and answering: the held jobs all go through,
    // the window refilled by each JOB_CREATED.
    const sock = srv.sockets[0];
    const parser = new PacketParser({ expect: 'REQ' });
    let seen = 0;
    sock.on('data', (chunk: Buffer) => {
      for (const p of parser.push(chunk)) {
        if (p.type === PacketType.SUBMIT_JOB_BG) sock.write(encodePacket('RES', PacketType.JOB_CREATED, [`H:fake:${++seen}`]));
      }
    });
    sock.resume();
    expect(await client.flush(10_000)).toBe(true);
    const end = client.stats();
    expect(end.submitted).toBe(s.queued + s.inFlight);
    expect(end.submitted + end.dropped).toBe(jobs);
    expect(end.bytes).toBe(0);
    expect(seen).toBe(end.submitted);
  });
});

describe('GearmanClient write backpressure', () => {
  it('stops writing when the socket buffer is full, before the window is used up', async () => {
    const srv = await fakeServer(() => {}, { pauseOnConnect: true });
    const client = new GearmanClient([{ host: '127.0.0.1', port: srv.port }], {
      maxQueued: 10_000, maxQueuedBytes: 1024 * 1024 * 1024, maxInFlight: 2000,
    }).start();
    cleanup.push(() => client.close());
    await waitUntil(() => srv.sockets.length === 1, 5000, 'the client to connect');
    const data = 'y'.repeat(64 * 1024);
    for (let i = 0; i < 2000; i++) client.submit('check_results', data);
    for (let i = 0; i < 20; i++) await tick();
    const s = client.stats();
    console.log(`never-reading server, 2000 jobs of 64 KiB, window 2000: inFlight ${s.inFlight}, queued ${s.queued}`);
    // Only what the kernel buffers took (a few MiB) plus one socket buffer's worth is written.
    expect(s.inFlight).toBeLessThan(500);
    expect(s.queued + s.inFlight).toBe(2000);
    expect(s.dropped).toBe(0);
  });
});

describe('GearmanConnection write high-water mark', () => {
  it('is 16 KiB on every Node line (Node 22 raised the default to 64 KiB: the worker held back 4x later)', async () => {
    const srv = await fakeServer(() => {}, { pauseOnConnect: true });
    const conn = new GearmanConnection({ host: '127.0.0.1', port: srv.port });
    cleanup.push(() => conn.close());
    const connected = new Promise<void>((r) => conn.once('connect', r));
    conn.start();
    await connected;
    expect(WRITE_HIGH_WATER_MARK).toBe(16 * 1024);
    // Past what the kernel takes, `writable` turns false once 16 KiB wait in user space.
    const packet = 'z'.repeat(1000);
    let sent = 0;
    while (conn.writable && sent < 100_000) {
      conn.send(PacketType.WORK_FAIL, [packet]);
      sent++;
    }
    expect(conn.writable).toBe(false);
    expect(conn.bufferedBytes).toBeGreaterThanOrEqual(WRITE_HIGH_WATER_MARK);
    expect(conn.bufferedBytes).toBeLessThan(WRITE_HIGH_WATER_MARK + 1024);
  });
});

describe('GearmanConnection reconnect backoff', () => {
  async function countAttempts(behaviour: (s: net.Socket) => void, ms: number): Promise<{ attempts: number; logs: string[] }> {
    let attempts = 0;
    const srv = await fakeServer((s) => {
      attempts++;
      behaviour(s);
    });
    const logs: string[] = [];
    const c = new GearmanConnection({ host: '127.0.0.1', port: srv.port }, {
      backoffMinMs: 100, backoffMaxMs: 5000, log: (level, m) => logs.push(`${level}: ${m}`),
    });
    c.on('disconnect', () => {});
    c.start();
    await new Promise((r) => setTimeout(r, ms));
    c.close();
    return { attempts, logs };
  }

  it('reconnect backoff does not reset on a connection the peer closes at once', async () => {
    const { attempts, logs } = await countAttempts((s) => s.destroy(), 2000);
    console.log(`accept-then-close peer: ${attempts} connection attempts in 2 s, ${logs.filter((l) => l.startsWith('error')).length} error lines`);
    // 0, 100, 300, 700, 1500 ms: five; the old code redialled every ~100 ms (~20).
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(attempts).toBeLessThanOrEqual(6);
  });

  it('reconnect backoff does not reset on a peer that answers garbage', async () => {
    const { attempts, logs } = await countAttempts((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n'), 2000);
    expect(logs.join('\n')).toMatch(/bad Gearman magic/);
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(attempts).toBeLessThanOrEqual(6);
  });

  it('a peer that sent a valid packet resets the backoff (a real server coming and going)', async () => {
    const { attempts } = await countAttempts((s) => s.end(encodePacket('RES', PacketType.NOOP)), 1000);
    // Redialled after backoffMinMs each time: about 10 in 1 s.
    expect(attempts).toBeGreaterThanOrEqual(7);
  });
});

describe('GearmanConnection partial packet deadline', () => {
  it('drops a connection whose half-received packet makes no progress', async () => {
    let attempts = 0;
    const srv = await fakeServer((s) => {
      attempts++;
      // A header announcing 100 bytes, 10 of them, then silence.
      s.write(Buffer.concat([Buffer.from('\0RES\0\0\0\x0b\0\0\0\x64', 'latin1'), Buffer.alloc(10, 0x41)]));
    });
    const logs: string[] = [];
    const c = new GearmanConnection({ host: '127.0.0.1', port: srv.port }, {
      backoffMinMs: 5000, partialPacketTimeoutMs: 300, log: (level, m) => logs.push(`${level}: ${m}`),
    });
    cleanup.push(() => c.close());
    let lost: Error | null = null;
    c.on('disconnect', (r) => (lost = r));
    const t0 = Date.now();
    c.start();
    await waitUntil(() => lost !== null, 5000, 'the stalled connection to be dropped');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(lost!.message).toMatch(/no traffic for 300 ms in the middle of a packet \(22 bytes received\)/);
    expect(attempts).toBe(1);
  });
});

describe('GearmanClient answer deadline', () => {
  /** Reads SUBMIT_JOB_BG packets; answers them with JOB_CREATED after `delayMs` unless `answer` says no for that connection. */
  async function submitServer(answer: (conn: number) => boolean, delayMs = 0) {
    const seen: Array<{ conn: number; unique: string }> = [];
    let conns = 0;
    const srv = await fakeServer((s) => {
      const conn = ++conns;
      const parser = new PacketParser({ expect: 'REQ' });
      s.on('data', (chunk) => {
        for (const p of parser.push(chunk)) {
          seen.push({ conn, unique: p.args[1].toString() });
          if (!answer(conn)) continue;
          setTimeout(() => s.destroyed || s.write(encodePacket('RES', PacketType.JOB_CREATED, [`H:x:${seen.length}`])), delayMs);
        }
      });
    });
    return { srv, seen, conns: () => conns };
  }

  it('a server that reads but never answers is dropped after answerTimeoutMs; the jobs go again on the next connection', async () => {
    const { srv, seen, conns } = await submitServer((conn) => conn > 1);
    const logs: string[] = [];
    const client = new GearmanClient([{ host: '127.0.0.1', port: srv.port }], {
      answerTimeoutMs: 300, backoffMinMs: 50, log: (level, m) => logs.push(`${level}: ${m}`),
    }).start();
    cleanup.push(() => client.close());
    const t0 = Date.now();
    for (let i = 0; i < 3; i++) client.submit('check_results', `r${i}`);
    await waitUntil(() => client.stats().submitted === 3, 5000, 'all three acknowledged');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(conns()).toBe(2);
    expect(logs.join('\n')).toMatch(/no answer for \d+ ms to 3 request\(s\); dropping the connection/);
    // The same jobs (same unique ids) were resent, none lost, none doubled.
    const first = seen.filter((s) => s.conn === 1).map((s) => s.unique);
    const second = seen.filter((s) => s.conn === 2).map((s) => s.unique);
    expect(first).toHaveLength(3);
    expect(second).toEqual(first);
    expect(client.stats()).toMatchObject({ queued: 0, inFlight: 0, dropped: 0 });
  });

  it('a slow server that does answer within the deadline keeps its connection', async () => {
    const { srv, conns } = await submitServer(() => true, 150);
    const client = new GearmanClient([{ host: '127.0.0.1', port: srv.port }], { answerTimeoutMs: 400, backoffMinMs: 50 }).start();
    cleanup.push(() => client.close());
    // A job every 100 ms for a second, each answered 150 ms after it was read.
    for (let i = 0; i < 10; i++) {
      client.submit('check_results', `r${i}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await waitUntil(() => client.stats().submitted === 10, 5000, 'all ten acknowledged');
    // Quiet for longer than the deadline: nothing is waited for, nothing is dropped.
    await new Promise((r) => setTimeout(r, 600));
    expect(conns()).toBe(1);
  });
});
