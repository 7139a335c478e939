// Reads check_results as the broker module's result thread does (grab,
// decrypt, WORK_COMPLETE, grab again) and counts each job's result once.
// A few connections, so the reader is never what the workers wait for.
import { GearmanConnection } from '../../gearman/protocol/connection';
import type { PayloadCodec } from '../../gearman/payload/crypto';
import { parseKeyValues } from '../../gearman/payload/job-payload';
import { PacketType } from '../../gearman/protocol/packet';

const READERS = 4;

export class ResultCounter {
  /** Distinct jobs (by service_description) that got a result. */
  readonly seen = new Set<string>();
  results = 0;
  /** Results that were not OK, or did not decode: the run is then invalid. */
  bad = 0;
  firstBad: string | null = null;
  lastAt = 0;
  private readonly conns: GearmanConnection[] = [];
  private waiter: { n: number; resolve: () => void } | null = null;

  constructor(port: number, private readonly codec: PayloadCodec) {
    for (let i = 0; i < READERS; i++) {
      const c = new GearmanConnection({ host: '127.0.0.1', port }, { backoffMinMs: 20, backoffMaxMs: 200 });
      c.on('connect', () => {
        c.send(PacketType.CAN_DO, ['check_results']);
        c.send(PacketType.GRAB_JOB_UNIQ);
      });
      c.on('packet', (p) => {
        if (p.type === PacketType.NO_JOB) c.send(PacketType.PRE_SLEEP);
        else if (p.type === PacketType.NOOP) c.send(PacketType.GRAB_JOB_UNIQ);
        else if (p.type === PacketType.JOB_ASSIGN_UNIQ) {
          c.send(PacketType.WORK_COMPLETE, [p.args[0], '']);
          c.send(PacketType.GRAB_JOB_UNIQ);
          this.count(p.args[3]);
        }
      });
      c.start();
      this.conns.push(c);
    }
  }

  get ready(): boolean {
    return this.conns.every((c) => c.connected);
  }

  private count(payload: Buffer): void {
    this.results++;
    this.lastAt = performance.now();
    let text: string;
    try {
      text = this.codec.decode(payload);
    } catch (err) {
      this.noteBad(`undecodable result: ${(err as Error).message}`);
      return;
    }
    const kv = parseKeyValues(text);
    const id = kv.get('service_description');
    if (id === undefined || kv.get('return_code') !== '0') this.noteBad(text);
    if (id !== undefined) this.seen.add(id);
    if (this.waiter !== null && this.seen.size >= this.waiter.n) this.waiter.resolve();
  }

  private noteBad(what: string): void {
    this.bad++;
    this.firstBad ??= what;
  }

  /** Resolves once `n` distinct jobs have a result; false after `ms`. */
  waitFor(n: number, ms: number): Promise<boolean> {
    if (this.seen.size >= n) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        resolve(false);
      }, ms);
      this.waiter = { n, resolve: () => {
        clearTimeout(timer);
        this.waiter = null;
        resolve(true);
      } };
    });
  }

  close(): void {
    for (const c of this.conns) c.close();
  }
}
