// GET /metrics from a prom-client Registry over HTTP: the scrape endpoint of
// noshell run. Loopback unless the caller names another address: the series
// carry check ids, commands' perfdata and process details.
//
// Requests share renders (shared-render.ts): concurrent ones get the chunks
// of the one in flight as they come, and one that comes within `maxAgeMs`
// (default 1 s) of a render's start gets that body, as long as the render
// keeps its chunks (bodies up to keepChars, 4 Mi UTF-16 units or bytes by default).
// Past that a render lets its chunks go as its readers take them, and a
// request that comes meanwhile gets a render of its own. HEAD costs none.
//
// Connections are few and short: a scraper needs one or two. Idle ones
// cost a file descriptor each, the same fds the checks need for their
// pipes: 1,100 idle connections under `ulimit -n 1024` made every check
// fail with EMFILE (issue 17). So at most maxConnections are held, a
// connection gets headersTimeoutMs for its request and keepAliveTimeoutMs
// between requests, and the cap leaves most of the fd limit to the children.
// A connection over the cap closes the oldest one that has no request in
// progress (one that never sent one, or a kept-alive one between requests),
// not itself: any local process holding the cap's worth of idle connections,
// opened again as they timed out, kept Prometheus out for as long as it went
// on. When every held connection is being served, the response that has run
// longest goes if it is past slowResponseMs (clients reading a large page a
// little at a time held every slot); else the new connection is closed.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { describe } from '../../util/validate';
import { RefreshLoop } from './refresh-loop';
import { SharedRender } from './shared-render';
import { loopTurns } from './turn-budget';
import { writeBody } from './write-body';
import type { MetricsSource } from './metrics-source';

export interface MetricsServer {
  server: http.Server;
  /** http://host:port/metrics, with the port actually bound. */
  url: string;
  close(): Promise<void>;
}

export interface ServeMetricsOptions {
  host?: string | undefined;
  port: number;
  /** How old a render may be and still be served, in ms (default 1000; 0: only concurrent requests share one). */
  maxAgeMs?: number | undefined;
  /**
   * Text a render keeps for requests that join it late or within maxAgeMs,
   * UTF-16 units or bytes (default 4 Mi); a longer body is let go as it is written.
   */
  keepChars?: number | undefined;
  /**
   * Connections held at once (default 64). One more closes the oldest without a
   * request in progress, else the one whose response has run longest if past
   * slowResponseMs, else itself.
   */
  maxConnections?: number | undefined;
  /**
   * A response in progress longer than this, ms (default 10,000: Prometheus's
   * default scrape timeout, past which its scrape has failed anyway), may be
   * cut for a new connection when every held one is busy: clients that read a
   * large page slowly, a little at a time (so no send timeout fires), held every
   * slot for as long as they went on.
   */
  slowResponseMs?: number | undefined;
  /** Time for a connection to send its request headers, ms (default 5,000). */
  headersTimeoutMs?: number | undefined;
  /** Time for a whole request, ms (default 10,000). */
  requestTimeoutMs?: number | undefined;
  /** Idle time between requests on a kept-alive connection, ms (default 5,000). */
  keepAliveTimeoutMs?: number | undefined;
  /**
   * Time a response may go without the client taking any of it, ms (default
   * 5,000); then the connection is closed. A client that asks and never reads
   * would otherwise hold its connection, and the render it was given, forever.
   */
  sendTimeoutMs?: number | undefined;
  /**
   * How often a source with refresh() (createRunnerSource) is refreshed while
   * served, ms (default 1,000; 0: never). Its first scrape then reads only
   * the checks that changed in the last second or so, not every check. A
   * runner's perfdata caps count only the label sets of results a scrape
   * showed: what a pass read of a result replaced before the next scrape is
   * taken back (perfdata-limit.ts).
   */
  refreshMs?: number | undefined;
}

function positive(value: number | undefined, name: string, dflt: number): number {
  if (value === undefined) return dflt;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw new TypeError(`${name} must be a whole number ≥ 1, got ${String(value)}`);
  return value;
}

export async function serveMetrics(registry: MetricsSource, options: ServeMetricsOptions): Promise<MetricsServer> {
  const host = options.host ?? '127.0.0.1';
  const maxAgeMs = options.maxAgeMs ?? 1000;
  if (!(maxAgeMs >= 0)) throw new TypeError(`maxAgeMs must be a non-negative number, got ${String(maxAgeMs)}`);
  const keepChars = options.keepChars ?? 4 * 1024 * 1024;
  if (!(keepChars >= 0)) throw new TypeError(`keepChars must be a non-negative number, got ${String(keepChars)}`);
  const maxConnections = positive(options.maxConnections, 'maxConnections', 64);
  const slowResponse = positive(options.slowResponseMs, 'slowResponseMs', 10_000);
  const headersTimeout = positive(options.headersTimeoutMs, 'headersTimeoutMs', 5000);
  const requestTimeout = Math.max(headersTimeout, positive(options.requestTimeoutMs, 'requestTimeoutMs', 10_000));
  const keepAliveTimeout = positive(options.keepAliveTimeoutMs, 'keepAliveTimeoutMs', 5000);
  const sendTimeout = positive(options.sendTimeoutMs, 'sendTimeoutMs', 5000);
  const refreshMs = options.refreshMs === undefined ? 1000 : options.refreshMs;
  if (!Number.isInteger(refreshMs) || refreshMs < 0 || refreshMs > 2 ** 31 - 1) {
    throw new TypeError(`refreshMs must be a whole number of ms from 0 to 2147483647, got ${describe(refreshMs)}`);
  }
  const refresh: unknown = (registry as { refresh?: unknown }).refresh;
  if (refresh !== undefined && typeof refresh !== 'function') throw new TypeError(`refresh must be a function, got ${describe(refresh)}`);
  // The render in flight or the latest; one that failed or let chunks go is not
  // joined, and an old one is let go (its readers hold it while they need it).
  let current: SharedRender | null = null;
  const render = (): SharedRender => {
    const c = current;
    if (c !== null && c.joinable && (!c.done || performance.now() - c.startedAt < maxAgeMs)) return c;
    const r = (current = new SharedRender(registry, keepChars));
    void r.ended.then(() => {
      setTimeout(() => {
        if (current === r) current = null;
      }, Math.max(0, maxAgeMs - (performance.now() - r.startedAt))).unref();
    });
    return r;
  };
  // Responses not yet ended, by connection: a client that pipelines a request behind one is
  // closed (Prometheus never does). Queued behind another, a response has no socket of its
  // own yet, and its writes had no send timeout: four such connections locked scrapers out.
  // The value: when the response in progress began (performance.now()), 0 for none.
  const open = new WeakMap<object, number>();
  const server = http.createServer({
    headersTimeout, requestTimeout, keepAliveTimeout,
    // How often the timeouts above are looked at (Node's default, 30 s, let idle connections pile up for that long).
    connectionsCheckingInterval: Math.min(1000, headersTimeout),
  }, (req, res) => {
    const socket = req.socket;
    if ((open.get(socket) ?? 0) > 0) {
      socket.destroy();
      return;
    }
    open.set(socket, performance.now());
    res.once('close', () => open.set(socket, 0));
    // A request came: from here on Node's own timeouts apply (a render may take long).
    socket.setTimeout(0);
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    // HEAD: the headers a GET would get, without a render.
    if (req.method === 'HEAD') {
      res.writeHead(200, { 'content-type': registry.contentType }).end();
      return;
    }
    const r = render();
    const reader = r.join();
    res.once('close', () => r.leave(reader));
    // The status waits for the first chunk: a render that fails at once is a 500.
    void r.more(0).then(() => {
      if (res.destroyed) return;
      // What failed is not told to whoever asked: its message may say more than the metrics do.
      if (r.length === 0 && r.error !== null) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics render failed\n');
        return;
      }
      res.writeHead(200, { 'content-type': registry.contentType });
      return writeBody(res, socket, r, reader, sendTimeout, loopTurns);
    }).catch(() => res.destroy());
  });
  // Held connections, oldest first (a Set keeps insertion order).
  const held = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    held.add(socket);
    socket.once('close', () => held.delete(socket));
    // A socket destroyed here (a send timeout, a victim) says 'close' a turn
    // later: it holds no slot meanwhile, or a scrape that came in that turn
    // found the cap full of connections already gone and was closed.
    if (held.size > maxConnections) for (const s of held) if (s.destroyed) held.delete(s);
    if (held.size > maxConnections) {
      // The oldest idle connection; else the response that has run longest, if past slowResponseMs.
      let victim: Socket | null = null;
      let longest = performance.now() - slowResponse;
      let slowest: Socket | null = null;
      for (const s of held) {
        if (s === socket) continue;
        const since = open.get(s) ?? 0;
        if (since === 0) {
          victim = s;
          break;
        }
        if (since < longest) {
          longest = since;
          slowest = s;
        }
      }
      victim ??= slowest;
      (victim ?? socket).destroy();
      held.delete(victim ?? socket);
      if (victim === null) return;
    }
    // A connection that sent nothing at all is not a request yet for the
    // timeouts above: the socket's own idle timer covers it.
    socket.setTimeout(headersTimeout, () => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  const shown = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  const refresher = registry.refresh === undefined ? null : new RefreshLoop((minAgeMs, signal) => registry.refresh!(minAgeMs, signal), refreshMs);
  refresher?.start();
  return {
    server,
    url: `http://${shown}:${a.port}/metrics`,
    close: () => {
      refresher?.close();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A scraper's keep-alive connection would hold close() open.
        server.closeAllConnections();
      });
    },
  };
}
