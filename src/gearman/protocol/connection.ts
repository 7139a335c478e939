// One TCP connection to one gearmand that comes back by itself: reconnects
// with exponential backoff after refusals, resets, EOF and protocol errors.
// The backoff starts over only once a connection proved good (a valid packet,
// or stableAfterMs up), so a peer that accepts and then closes or talks
// garbage is not redialled every backoffMinMs.
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { AnswerDeadline } from './answer-deadline';
import type { ServerAddress } from './server-address';
import { MAX_UNREAD, WRITE_HIGH_WATER_MARK, resolveConnectionOptions, type ConnectionOptions, type ResolvedConnectionOptions } from './connection-options';
import { encodePacket, GearmanProtocolError, PacketParser, type Packet } from './packet';

export { DEFAULT_PORT, parseServer, type ServerAddress } from './server-address';
export { resolveConnectionOptions, type ConnectionOptions } from './connection-options';

export interface GearmanConnection {
  on(event: 'connect', listener: () => void): this;
  on(event: 'disconnect', listener: (reason: Error | null) => void): this;
  on(event: 'packet', listener: (packet: Packet) => void): this;
  /** The socket's write buffer emptied after send() filled it (see `writable`). */
  on(event: 'drain', listener: () => void): this;
}

export class GearmanConnection extends EventEmitter {
  readonly server: ServerAddress;
  /** Successful connects after the first one. */
  reconnects = 0;
  /** Increments per socket, so work begun on an old socket is not answered on a new one. */
  generation = 0;
  private socket: net.Socket | null = null;
  private connectedOnce = false;
  private isConnected = false;
  private closed = false;
  private attempt = 0;
  private corked = false;
  private timer: NodeJS.Timeout | null = null;
  private stableTimer: NodeJS.Timeout | null = null;
  private deadline: AnswerDeadline | null = null;
  /** Why drop() ended the current socket, for its 'disconnect'. */
  private dropReason: Error | null = null;
  private readonly opts: ResolvedConnectionOptions;

  constructor(server: ServerAddress, options: ConnectionOptions = {}) {
    super();
    this.server = server;
    this.opts = resolveConnectionOptions(options);
  }

  get connected(): boolean {
    return this.isConnected;
  }

  /** Connected and the socket's write buffer is under WRITE_HIGH_WATER_MARK; else wait for 'drain' (or 'connect'). */
  get writable(): boolean {
    return this.isConnected && this.socket !== null && !this.socket.writableNeedDrain;
  }

  get label(): string {
    return `${this.server.host}:${this.server.port}`;
  }

  start(): void {
    if (this.socket === null && this.timer === null && !this.closed) this.open();
  }

  /**
   * Writes one packet; false when not connected (the caller keeps the work).
   * `expectsAnswer`: gearmand answers it with exactly one packet, which the
   * caller reports with answered(); unanswered past answerTimeoutMs, the
   * connection is dropped and redialled.
   */
  send(type: number, args: ReadonlyArray<string | Buffer> = [], expectsAnswer = false): boolean {
    if (!this.isConnected || this.socket === null || this.socket.destroyed) return false;
    if (expectsAnswer) this.deadline?.expect();
    const socket = this.socket;
    // Packets sent in one tick (WORK_COMPLETE then GRAB_JOB, a burst of
    // results) leave in one write syscall.
    if (!this.corked) {
      this.corked = true;
      socket.cork();
      process.nextTick(() => {
        this.corked = false;
        socket.uncork();
      });
    }
    socket.write(encodePacket('REQ', type, args));
    // Callers hold back at the high-water mark (writable); a peer that takes
    // nothing while we still must answer it is cut off here, not by the OOM killer.
    if (socket.writableLength > MAX_UNREAD) this.drop(`does not read: ${socket.writableLength} bytes unread`);
    return true;
  }

  /** Bytes written and not yet taken by the kernel. */
  get bufferedBytes(): number {
    return this.socket?.writableLength ?? 0;
  }

  /** Drops this connection (it is redialled after the backoff), logging why. */
  drop(why: string): void {
    if (this.socket === null) return;
    this.dropReason = new Error(why);
    this.opts.log?.('error', `gearmand ${this.label}: ${why}; dropping the connection`);
    this.socket.destroy();
  }

  /** The answer to the oldest request sent with expectsAnswer arrived. */
  answered(): void {
    this.deadline?.answered();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.clearStableTimer();
    this.socket?.destroy();
  }

  /**
   * Closes once what was sent has been written (a job's last answer), not
   * dialled again; a peer that does not take it within `ms` is cut off.
   */
  closeWhenWritten(ms = 5000): void {
    const socket = this.socket;
    if (socket === null || socket.destroyed) return this.close();
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.clearStableTimer();
    // end() uncorks: the packets of this tick go out before the FIN.
    socket.end();
    setTimeout(() => socket.destroy(), ms).unref();
  }

  private clearStableTimer(): void {
    if (this.stableTimer !== null) clearTimeout(this.stableTimer);
    this.stableTimer = null;
  }

  private open(): void {
    const parser = new PacketParser({ expect: 'RES', ...(this.opts.maxBodySize !== undefined ? { maxBodySize: this.opts.maxBodySize } : {}) });
    // net.Socket hands its options to stream.Duplex, which takes the mark
    // (not in @types/node's NetConnectOpts; test/gearman/gearman-client.test.ts checks
    // it on every Node line CI runs).
    const connectOptions: net.TcpNetConnectOpts & { writableHighWaterMark: number } = {
      host: this.server.host, port: this.server.port, writableHighWaterMark: WRITE_HIGH_WATER_MARK,
    };
    const socket = net.connect(connectOptions);
    this.socket = socket;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    // Before 'connect' the connect deadline; after it, the deadline of a
    // half-received packet (armed only while one is pending). It is the
    // socket's idle timer: any traffic, our writes included, restarts it.
    socket.setTimeout(this.opts.connectTimeoutMs, () => {
      if (!this.isConnected) socket.destroy(new Error(`connect to ${this.label} timed out`));
      else if (parser.pending > 0) {
        reason = new Error(`no traffic for ${this.opts.partialPacketTimeoutMs} ms in the middle of a packet (${parser.pending} bytes received)`);
        this.opts.log?.('error', `gearmand ${this.label}: ${reason.message}; dropping the connection`);
        socket.destroy();
      }
    });
    let reason: Error | null = null;
    const deadline = new AnswerDeadline(this.opts.answerTimeoutMs, (waited, n) => {
      reason = new Error(`no answer for ${Math.round(waited)} ms to ${n} request(s)`);
      this.opts.log?.('error', `gearmand ${this.label}: ${reason.message}; dropping the connection`);
      socket.destroy();
    });
    this.deadline = deadline;
    let good = false;
    let waiting = false;
    const proven = () => {
      if (good) return;
      good = true;
      this.attempt = 0;
      this.clearStableTimer();
    };
    socket.on('drain', () => this.emit('drain'));
    socket.on('connect', () => {
      socket.setTimeout(0);
      this.isConnected = true;
      // Not attempt = 0 here: see proven().
      this.stableTimer = setTimeout(proven, this.opts.stableAfterMs);
      this.generation++;
      if (this.connectedOnce) this.reconnects++;
      this.connectedOnce = true;
      this.opts.log?.('info', `connected to gearmand ${this.label}`);
      this.emit('connect');
    });
    socket.on('data', (chunk: Buffer) => {
      let packets: Packet[];
      try {
        packets = parser.push(chunk);
      } catch (err) {
        // Malformed stream: this connection is unusable, the process is fine.
        reason = err as GearmanProtocolError;
        this.opts.log?.('error', `gearmand ${this.label}: ${reason.message}; dropping the connection`);
        socket.destroy();
        return;
      }
      const partial = parser.pending > 0;
      if (partial !== waiting) {
        waiting = partial;
        socket.setTimeout(partial ? this.opts.partialPacketTimeoutMs : 0);
      }
      if (packets.length > 0) proven();
      for (const p of packets) {
        if (socket.destroyed) return;
        try {
          this.emit('packet', p);
        } catch (err) {
          // A handler's bug must not run up into the socket and end the
          // process: it costs that packet only.
          this.opts.log?.('error', `gearmand ${this.label}: handling a ${p.type} packet failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
        }
      }
    });
    socket.on('error', (err) => {
      reason ??= err;
    });
    socket.on('close', () => {
      reason ??= this.dropReason;
      this.dropReason = null;
      deadline.clear();
      if (this.deadline === deadline) this.deadline = null;
      if (this.stableTimer !== null) this.clearStableTimer();
      const was = this.isConnected;
      this.isConnected = false;
      this.socket = null;
      if (was) {
        if (!this.closed) this.opts.log?.('error', `lost gearmand ${this.label}${reason ? `: ${reason.message}` : ''}`);
        this.emit('disconnect', reason);
      }
      if (this.closed) return;
      const delay = Math.min(this.opts.backoffMaxMs, this.opts.backoffMinMs * 2 ** this.attempt);
      this.attempt = Math.min(this.attempt + 1, 30);
      if (!was && this.attempt === 1) {
        this.opts.log?.('error', `cannot connect to gearmand ${this.label}${reason ? `: ${reason.message}` : ''}; retrying`);
      }
      this.timer = setTimeout(() => {
        this.timer = null;
        if (!this.closed) this.open();
      }, delay);
    });
  }
}
