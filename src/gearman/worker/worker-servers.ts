// The worker's gearmand connections, one per server, each with its grab
// window: grabs are spread over them round-robin, never past the free
// slots, and held back from a gearmand whose socket is over its high-water
// mark; the grab protocol's answers (NO_JOB, NOOP, JOB_ASSIGN_UNIQ) are
// handled here and assigned jobs handed to the worker.
import { GearmanConnection, type ConnectionOptions, type ServerAddress } from '../protocol/connection';
import { GrabWindow } from './grab-window';
import { countOf } from '../../util/count-text';
import { LogLimit, peerText } from '../protocol/log-limit';
import { PacketType, type Packet } from '../protocol/packet';

type Log = (level: 'error' | 'info' | 'debug', message: string) => void;

interface Server {
  conn: GearmanConnection;
  grabs: GrabWindow;
  /** Lines this gearmand causes at will (ERROR, unasked jobs). */
  noise: LogLimit;
}

export interface ServerHooks {
  log: Log;
  /** The queues to announce with CAN_DO. */
  abilities(): string[];
  /** max-worker minus the jobs running (grabs in flight are taken off here). */
  freeSlots(): number;
  /** False while stopping or over a load limit (the worker calls grab() again later). */
  mayGrab(): boolean;
  onJob(conn: GearmanConnection, handle: string, queue: string, data: Buffer): void;
}

export function serverKey(a: ServerAddress): string {
  return `${a.host}:${a.port}`;
}

export class WorkerServers {
  private list: Server[] = [];
  /**
   * Jobs each connection holds (assigned, not yet answered), for the
   * connection's generation they came on: a new generation (a reconnect) holds
   * none, gearmand having taken them back.
   */
  private readonly holding = new Map<GearmanConnection, { generation: number; jobs: number }>();
  /**
   * Connections of servers a reload dropped that still hold jobs: no new ones
   * (RESET_ABILITIES, no grabs), closed once those are answered. Closed at
   * once, gearmand handed each job it held to another worker, so the check ran
   * twice and two results were posted.
   */
  private readonly draining = new Set<GearmanConnection>();
  /** Where grab() starts, turned each call so no server is always served first. */
  private next = 0;
  private started = false;

  constructor(addresses: readonly ServerAddress[], private connOptions: ConnectionOptions, private limit: number, private readonly hooks: ServerHooks) {
    this.list = addresses.map((a) => this.create(a));
  }

  get connected(): number {
    return this.list.filter((s) => s.conn.connected).length;
  }

  get reconnects(): number {
    return this.list.reduce((n, s) => n + s.conn.reconnects, 0);
  }

  start(): void {
    this.started = true;
    for (const s of this.list) s.conn.start();
  }

  /**
   * Serves exactly `addresses` from now on: new ones dialled, dropped ones
   * closed (gearmand gives the jobs such a connection holds to another
   * worker), the rest kept as they are.
   */
  setAddresses(addresses: readonly ServerAddress[], connOptions: ConnectionOptions): void {
    this.connOptions = connOptions;
    const wanted = new Set(addresses.map(serverKey));
    const kept: Server[] = [];
    for (const s of this.list) {
      if (wanted.has(serverKey(s.conn.server))) kept.push(s);
      else {
        s.conn.send(PacketType.RESET_ABILITIES);
        const held = this.held(s.conn);
        if (held > 0) {
          this.draining.add(s.conn);
          this.hooks.log('info', `gearmand ${s.conn.label} dropped: closed once the ${countOf(held, 'job')} it handed out ${held === 1 ? 'is' : 'are'} answered`);
        } else {
          s.conn.close();
        }
      }
    }
    const have = new Set(kept.map((s) => serverKey(s.conn.server)));
    for (const a of addresses) {
      if (have.has(serverKey(a))) continue;
      const s = this.create(a);
      kept.push(s);
      if (this.started) s.conn.start();
    }
    this.list = kept;
    this.next = 0;
  }

  setLimit(limit: number): void {
    this.limit = limit;
    for (const s of this.list) s.grabs.setLimit(limit);
  }

  /**
   * Announces the queues again on every connection. gearmand reads packets
   * in order, so grabs already sent are answered under the old abilities and
   * the windows stay as they are.
   */
  reannounce(): void {
    for (const s of this.list) if (s.conn.connected) this.announce(s, true);
  }

  /** Withdraws the abilities: grabs still in flight come back NO_JOB. */
  resetAbilities(): void {
    for (const s of this.list) s.conn.send(PacketType.RESET_ABILITIES);
  }

  close(): void {
    for (const s of this.list) s.conn.close();
    for (const c of this.draining) c.close();
    this.draining.clear();
  }

  /** Jobs `conn` holds now (those of its current generation). */
  private held(conn: GearmanConnection): number {
    const h = this.holding.get(conn);
    return h !== undefined && h.generation === conn.generation ? h.jobs : 0;
  }

  /**
   * A job assigned on `conn` (in `generation`) was answered: a dropped
   * server's connection that holds no more is closed.
   */
  jobAnswered(conn: GearmanConnection, generation: number): void {
    const h = this.holding.get(conn);
    if (h === undefined || h.generation !== generation) return;
    if (--h.jobs <= 0) this.holding.delete(conn);
    // After the answer just sent: it must reach gearmand before the connection goes.
    if (h.jobs <= 0 && this.draining.delete(conn)) conn.closeWhenWritten();
  }

  /** Asks servers for jobs while slots are free (a grab in flight holds a slot). */
  grab(): void {
    const n = this.list.length;
    let free = this.hooks.freeSlots();
    for (const s of this.list) free -= s.grabs.outstanding;
    if (free <= 0 || n === 0) return;
    const start = this.next;
    this.next = (start + 1) % n;
    for (let i = 0; i < n && free > 0; i++) {
      const s = this.list[(start + i) % n];
      // A gearmand that stops reading gets no more grabs until its socket
      // drains: each grab can bring a job whose answer we would have to
      // buffer (a status-queue flood grew the worker by 800 MB, issue 17).
      if (!s.conn.writable) continue;
      let want = s.grabs.wanted(free);
      if (want === 0) continue;
      if (!this.hooks.mayGrab()) return;
      // Packets of one tick leave in one write (see GearmanConnection.send).
      let sent = 0;
      while (want-- > 0 && s.conn.send(PacketType.GRAB_JOB_UNIQ, [], true)) sent++;
      s.grabs.sent(sent);
      free -= sent;
    }
  }

  private create(address: ServerAddress): Server {
    const conn = new GearmanConnection(address, this.connOptions);
    const server: Server = { conn, grabs: new GrabWindow(this.limit), noise: new LogLimit() };
    conn.on('connect', () => {
      // Dropped while it held jobs, then lost: those are gearmand's again, nothing is left to answer.
      if (this.draining.delete(conn)) {
        conn.close();
        return;
      }
      this.announce(server, false);
      server.grabs.connected();
      this.grab();
    });
    conn.on('disconnect', () => {
      server.grabs.disconnected();
      this.holding.delete(conn);
      if (this.draining.delete(conn)) conn.close();
    });
    conn.on('packet', (p) => this.onPacket(server, p));
    conn.on('drain', () => this.grab());
    return server;
  }

  private announce(s: Server, again: boolean): void {
    if (again) s.conn.send(PacketType.RESET_ABILITIES);
    for (const q of this.hooks.abilities()) s.conn.send(PacketType.CAN_DO, [q]);
  }

  private onPacket(s: Server, p: Packet): void {
    switch (p.type) {
      case PacketType.NO_JOB:
        s.conn.answered();
        if (s.grabs.noJob()) s.conn.send(PacketType.PRE_SLEEP);
        else this.grab();
        break;
      case PacketType.NOOP:
        s.grabs.woken();
        this.grab();
        break;
      case PacketType.JOB_ASSIGN_UNIQ:
        if (s.grabs.outstanding === 0) {
          // Not an answer to a grab: running it could go past max-worker.
          if (!s.conn.writable) {
            // Assigning unasked and not reading our answers: every WORK_FAIL would
            // only pile up in our write buffer.
            s.conn.drop(`assigns jobs without grabs and does not read (${s.conn.bufferedBytes} bytes unread)`);
            break;
          }
          const note = s.noise.pass();
          if (note !== null) this.hooks.log('error', `gearmand ${s.conn.label} assigned job ${peerText(p.args[0])} without a grab; WORK_FAIL${note}`);
          s.conn.send(PacketType.WORK_FAIL, [p.args[0]]);
          break;
        }
        s.conn.answered();
        s.grabs.assigned();
        {
          const h = this.holding.get(s.conn);
          if (h !== undefined && h.generation === s.conn.generation) h.jobs++;
          else this.holding.set(s.conn, { generation: s.conn.generation, jobs: 1 });
        }
        this.hooks.onJob(s.conn, p.args[0].toString('latin1'), p.args[1].toString('utf8'), p.args[3]);
        this.grab();
        break;
      case PacketType.ERROR: {
        const note = s.noise.pass();
        if (note !== null) this.hooks.log('error', `gearmand ${s.conn.label} error: ${p.args.map((a) => peerText(a)).join(': ')}${note}`);
        break;
      }
      default:
        break;
    }
  }
}
