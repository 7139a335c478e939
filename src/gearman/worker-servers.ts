// The worker's gearmand connections, one per server, each with its grab
// window: grabs are spread over them round-robin, never past the free
// slots, and held back from a gearmand whose socket is over its high-water
// mark; the grab protocol's answers (NO_JOB, NOOP, JOB_ASSIGN_UNIQ) are
// handled here and assigned jobs handed to the worker.
import { GearmanConnection, type ConnectionOptions, type ServerAddress } from './connection';
import { GrabWindow } from './grab-window';
import { LogLimit, peerText } from './log-limit';
import { PacketType, type Packet } from './packet';

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
        s.conn.close();
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
      this.announce(server, false);
      server.grabs.connected();
      this.grab();
    });
    conn.on('disconnect', () => server.grabs.disconnected());
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
