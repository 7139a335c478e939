// How the worker asks for jobs, packet by packet, against a scripted job
// server on loopback: several grabs in flight once jobs keep coming (never
// more than the free slots), one grab per wake-up on an idle queue, PRE_SLEEP
// only after the last grab in flight came back NO_JOB.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GrabWindow } from '../../src/gearman/worker/grab-window';
import { encodePacket, PacketParser, PacketType as T, type Packet } from '../../src/gearman/protocol/packet';
import { formatJob } from '../../src/gearman/payload/job-payload';
import { GearmanWorker } from '../../src/gearman/worker/worker';
import { waitUntil } from '../fixtures/gearman/harness';

describe('GrabWindow', () => {
  it('starts at one grab, doubles per job up to the limit and the free slots, back to one on NO_JOB', () => {
    const w = new GrabWindow(8);
    expect(w.wanted(8)).toBe(0); // not connected
    w.connected();
    expect(w.wanted(8)).toBe(1);
    w.sent(1);
    expect(w.wanted(8)).toBe(0);
    w.assigned();
    expect(w.wanted(8)).toBe(2);
    w.sent(2);
    w.assigned();
    w.assigned();
    expect(w.wanted(8)).toBe(8);
    expect(w.wanted(3)).toBe(3);
    w.sent(3);
    expect(w.noJob()).toBe(false); // two still in flight
    expect(w.wanted(8)).toBe(0); // window 1, two outstanding
    w.assigned(); // a job came in between: gearmand answers in order
    expect(w.noJob()).toBe(true); // the last one: sleep
    expect(w.phase).toBe('sleeping');
    expect(w.wanted(8)).toBe(0);
    w.woken();
    expect(w.wanted(8)).toBe(1);
    w.sent(1);
    w.disconnected();
    expect(w.outstanding).toBe(0);
    expect(w.wanted(8)).toBe(0);
  });
});

/** A job server that records what the worker sends and answers only when told. */
class ScriptedServer {
  readonly server = net.createServer((s) => this.onConnection(s));
  worker: net.Socket | null = null;
  /** Worker connections seen (each announces its abilities with CAN_DO). */
  workerConnections = 0;
  /** Packets from the worker's connection (the result client's go elsewhere). */
  readonly packets: Packet[] = [];
  readonly results: string[] = [];
  private handles = 0;

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  private onConnection(sock: net.Socket): void {
    sock.on('error', () => {});
    const parser = new PacketParser({ expect: 'REQ' });
    sock.on('data', (chunk) => {
      for (const p of parser.push(chunk)) {
        if (p.type === T.CAN_DO && this.worker !== sock) {
          this.worker = sock;
          this.workerConnections++;
        }
        if (p.type === T.SUBMIT_JOB_BG || p.type === T.SUBMIT_JOB_LOW_BG) {
          // The result client: take the result and say it is queued.
          this.results.push(Buffer.from(p.args[2].toString(), 'base64').toString());
          sock.write(encodePacket('RES', T.JOB_CREATED, [`H:r:${++this.handles}`]));
        } else if (sock === this.worker) {
          this.packets.push(p);
        }
      }
    });
  }

  count(type: number): number {
    return this.packets.filter((p) => p.type === type).length;
  }

  send(type: number, args: Array<string | Buffer> = []): void {
    this.worker!.write(encodePacket('RES', type, args));
  }

  assign(command: string): void {
    const text = formatJob({ type: 'host', hostName: `h${this.handles + 1}`, commandLine: command });
    this.send(T.JOB_ASSIGN_UNIQ, [`H:j:${++this.handles}`, 'host', '', Buffer.from(text).toString('base64')]);
  }

  async close(): Promise<void> {
    this.worker?.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

describe('GearmanWorker grabbing, against a scripted job server', () => {
  let srv: ScriptedServer | null = null;
  let worker: GearmanWorker | null = null;
  afterEach(async () => {
    await worker?.stop({ deadlineMs: 2000, flushMs: 500 });
    worker = null;
    await srv?.close();
    srv = null;
  });

  it('opens the window as jobs come, never past the free slots, and sleeps after the last NO_JOB', async () => {
    srv = new ScriptedServer();
    const address = await srv.listen();
    worker = new GearmanWorker({ servers: [address], encryption: false, identifier: 'grab', maxWorker: 4, hosts: true }).start();
    const s = srv;
    const grabs = (n: number) => waitUntil(() => s.count(T.GRAB_JOB_UNIQ) >= n, 5000, `${n} grabs`);
    // A quiet moment shows no further grab is on its way.
    const settle = () => new Promise((r) => setTimeout(r, 150));

    await grabs(1);
    await settle();
    expect(s.count(T.GRAB_JOB_UNIQ)).toBe(1);

    s.assign('/bin/sleep 0.8'); // running 1; window 2 → two grabs
    await grabs(3);
    await settle();
    expect(s.count(T.GRAB_JOB_UNIQ)).toBe(3);

    s.assign('/bin/sleep 0.8');
    s.assign('/bin/sleep 0.8'); // running 3 of 4; window 8 but one slot free
    await grabs(4);
    await settle();
    expect(s.count(T.GRAB_JOB_UNIQ)).toBe(4);
    expect(worker.runningJobs).toBe(3);

    s.send(T.NO_JOB); // the last grab in flight: PRE_SLEEP
    await waitUntil(() => s.count(T.PRE_SLEEP) === 1, 5000, 'PRE_SLEEP');

    s.send(T.NOOP); // woken: one grab, not one per free slot
    await grabs(5);
    await settle();
    expect(s.count(T.GRAB_JOB_UNIQ)).toBe(5);
    s.send(T.NO_JOB);
    await waitUntil(() => s.count(T.PRE_SLEEP) === 2, 5000, 'second PRE_SLEEP');

    // Jobs finishing while asleep: WORK_COMPLETE each, results sent, no grab.
    await waitUntil(() => s.count(T.WORK_COMPLETE) === 3 && s.results.length === 3, 5000, 'three results');
    await settle();
    expect(s.count(T.GRAB_JOB_UNIQ)).toBe(5);
    expect(s.results.every((r) => r.includes('return_code=0'))).toBe(true);
  });

  it('several grabs in flight answered NO_JOB, JOB_ASSIGN, NO_JOB in order: runs the job, sleeps after the last', async () => {
    srv = new ScriptedServer();
    const address = await srv.listen();
    worker = new GearmanWorker({ servers: [address], encryption: false, identifier: 'grab2', maxWorker: 8, hosts: true }).start();
    const s = srv;
    await waitUntil(() => s.count(T.GRAB_JOB_UNIQ) >= 1, 5000, 'first grab');
    s.assign('/bin/true');
    await waitUntil(() => s.count(T.GRAB_JOB_UNIQ) >= 3, 5000, 'two more grabs');
    s.assign('/bin/sleep 0.5');
    await waitUntil(() => s.count(T.GRAB_JOB_UNIQ) >= 3 + 3, 5000, 'window of four');
    await new Promise((r) => setTimeout(r, 150));
    // Two jobs assigned: window 4, all four in flight (slots are plenty).
    const inFlight = s.count(T.GRAB_JOB_UNIQ) - 2;
    expect(inFlight).toBe(4);
    s.send(T.NO_JOB);
    s.assign('/bin/true');
    for (let i = 2; i < inFlight; i++) s.send(T.NO_JOB);
    await waitUntil(() => s.count(T.PRE_SLEEP) === 1, 5000, 'PRE_SLEEP after the last answer');
    await waitUntil(() => s.results.length === 3, 5000, 'three results');
    expect(s.count(T.WORK_COMPLETE)).toBe(3);
  });

  it('a server that never answers a grab is dropped after answerTimeoutMs and redialled; the new connection is served', async () => {
    srv = new ScriptedServer();
    const address = await srv.listen();
    const logs: string[] = [];
    worker = new GearmanWorker({
      servers: [address], encryption: false, identifier: 'grab3', maxWorker: 2, hosts: true,
      answerTimeoutMs: 300, backoffMinMs: 50, log: (level, m) => logs.push(`${level}: ${m}`),
    }).start();
    const s = srv;
    await waitUntil(() => s.count(T.GRAB_JOB_UNIQ) >= 1, 5000, 'first grab');
    // No answer: after the deadline the worker redials, announces itself again, grabs again.
    await waitUntil(() => s.workerConnections === 2 && s.count(T.GRAB_JOB_UNIQ) >= 2, 5000, 'a second connection');
    expect(logs.join('\n')).toMatch(/no answer for \d+ ms to 1 request\(s\); dropping the connection/);
    s.assign('/bin/true');
    await waitUntil(() => s.results.length === 1, 5000, 'the result');
    expect(s.results[0]).toMatch(/return_code=0/);
  });

  it('a job assigned without a grab in flight is given back (WORK_FAIL), not run past max-worker', async () => {
    srv = new ScriptedServer();
    const address = await srv.listen();
    const logs: string[] = [];
    worker = new GearmanWorker({
      servers: [address], encryption: false, identifier: 'grab4', maxWorker: 1, hosts: true,
      log: (level, m) => logs.push(`${level}: ${m}`),
    }).start();
    const s = srv;
    await waitUntil(() => s.count(T.GRAB_JOB_UNIQ) === 1, 5000, 'first grab');
    s.assign('/bin/sleep 0.5'); // the one slot is taken, no grab in flight
    await waitUntil(() => worker!.runningJobs === 1, 5000, 'the job to run');
    s.assign('/bin/true'); // unasked
    await waitUntil(() => s.count(T.WORK_FAIL) === 1, 5000, 'WORK_FAIL');
    expect(s.packets.find((p) => p.type === T.WORK_FAIL)!.args[0].toString()).toBe('H:j:2');
    expect(worker.runningJobs).toBe(1);
    expect(logs.join('\n')).toMatch(/assigned job "H:j:2" without a grab; WORK_FAIL/);
    // The first job still finishes normally, and its slot brings the next grab.
    await waitUntil(() => s.results.length === 1 && s.count(T.GRAB_JOB_UNIQ) === 2, 5000, 'result and next grab');
    expect(s.results).toHaveLength(1);
  });
});
