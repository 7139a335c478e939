// GET /metrics from a prom-client Registry over HTTP: the scrape endpoint of
// noshell run. Loopback unless the caller names another address: the series
// carry check ids, commands' perfdata and process details.
//
// A render of 1,000 checks takes 90-270 ms on the event loop, so requests
// share renders: concurrent ones wait for the one in flight, and one that
// comes within `maxAgeMs` (default 1 s) of a render's start gets that body.
// Hammering the endpoint costs at most one render per second.
//
// Connections are few and short: a scraper needs one or two. Idle ones
// cost a file descriptor each, the same fds the checks need for their
// pipes: 1,100 idle connections under `ulimit -n 1024` made every check
// fail with EMFILE (issue 17). So at most maxConnections are held (more
// are closed as they are accepted), a connection gets headersTimeoutMs for
// its request and keepAliveTimeoutMs between requests, and the cap leaves
// most of the fd limit to the children.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What is served: a prom-client Registry, or anything that renders the text format. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
  /** The same text in chunks, rendered in slices (runnerMetricsSource): served chunked, never joined into one string. */
  chunks?(): AsyncIterable<string>;
}

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
  /** Connections held at once (default 64); more are closed as soon as they are accepted. */
  maxConnections?: number | undefined;
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
}

function positive(value: number | undefined, name: string, dflt: number): number {
  if (value === undefined) return dflt;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw new TypeError(`${name} must be a whole number ≥ 1, got ${String(value)}`);
  return value;
}

const WRITE_SLICE_MS = 5;

async function renderChunks(source: MetricsSource): Promise<readonly string[]> {
  if (source.chunks === undefined) return [await source.metrics()];
  const body: string[] = [];
  for await (const c of source.chunks()) body.push(c);
  return body;
}

/**
 * Chunked transfer, a chunk at a time as the socket takes them, with a turn
 * of the event loop every few ms: a fast reader on loopback takes every write
 * at once, and 50 MB written in one go blocked the loop for 70-270 ms. A
 * client that goes away ends it.
 */
async function writeBody(res: http.ServerResponse, body: readonly string[]): Promise<void> {
  if (body.length === 1) {
    res.end(body[0]);
    return;
  }
  let sliceStart = performance.now();
  for (const chunk of body) {
    if (res.destroyed) return;
    if (performance.now() - sliceStart >= WRITE_SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
      if (res.destroyed) return;
    }
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done).off('close', done);
          resolve();
        };
        res.on('drain', done).on('close', done);
      });
    }
  }
  res.end();
}

export async function serveMetrics(registry: MetricsSource, options: ServeMetricsOptions): Promise<MetricsServer> {
  const host = options.host ?? '127.0.0.1';
  const maxAgeMs = options.maxAgeMs ?? 1000;
  if (!(maxAgeMs >= 0)) throw new TypeError(`maxAgeMs must be a non-negative number, got ${String(maxAgeMs)}`);
  const maxConnections = positive(options.maxConnections, 'maxConnections', 64);
  const headersTimeout = positive(options.headersTimeoutMs, 'headersTimeoutMs', 5000);
  const requestTimeout = Math.max(headersTimeout, positive(options.requestTimeoutMs, 'requestTimeoutMs', 10_000));
  const keepAliveTimeout = positive(options.keepAliveTimeoutMs, 'keepAliveTimeoutMs', 5000);
  const sendTimeout = positive(options.sendTimeoutMs, 'sendTimeoutMs', 5000);
  let inFlight: Promise<readonly string[]> | null = null;
  let last: { body: readonly string[]; startedAt: number } | null = null;
  const render = (): Promise<readonly string[]> => {
    if (last !== null && performance.now() - last.startedAt < maxAgeMs) return Promise.resolve(last.body);
    if (inFlight === null) {
      const startedAt = performance.now();
      const p = renderChunks(registry);
      inFlight = p;
      // A failed render is not kept: the next request tries again.
      p.then((body) => (last = { body, startedAt }), () => {}).finally(() => {
        if (inFlight === p) inFlight = null;
      });
    }
    return inFlight;
  };
  const server = http.createServer({
    headersTimeout, requestTimeout, keepAliveTimeout,
    // How often the timeouts above are looked at (Node's default, 30 s, let idle connections pile up for that long).
    connectionsCheckingInterval: Math.min(1000, headersTimeout),
  }, (req, res) => {
    // A request came: from here on Node's own timeouts apply (a render may take long).
    req.socket.setTimeout(0);
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    render().then(
      (body) => {
        // From here the socket must make progress: no write taken for sendTimeout ms
        // closes it (the connection's 'timeout' listener destroys the socket).
        req.socket.setTimeout(sendTimeout);
        res.writeHead(200, { 'content-type': registry.contentType });
        if (req.method === 'HEAD') res.end();
        else void writeBody(res, body);
      },
      (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(e as Error).message}\n`),
    );
  });
  server.maxConnections = maxConnections;
  // A connection that sent nothing at all is not a request yet for the
  // timeouts above: the socket's own idle timer covers it.
  server.on('connection', (socket) => socket.setTimeout(headersTimeout, () => socket.destroy()));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  const shown = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return {
    server,
    url: `http://${shown}:${a.port}/metrics`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      // A scraper's keep-alive connection would hold close() open.
      server.closeAllConnections();
    }),
  };
}
