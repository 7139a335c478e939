// GET /metrics from a prom-client Registry over HTTP: the scrape endpoint of
// noshell run. Loopback unless the caller names another address: the series
// carry check ids, commands' perfdata and process details.
//
// A render of 1,000 checks takes 90-270 ms on the event loop, so requests
// share renders: concurrent ones wait for the one in flight, and one that
// comes within `maxAgeMs` (default 1 s) of a render's start gets that body.
// Hammering the endpoint costs at most one render per second.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

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
}

export async function serveMetrics(registry: Registry, options: ServeMetricsOptions): Promise<MetricsServer> {
  const host = options.host ?? '127.0.0.1';
  const maxAgeMs = options.maxAgeMs ?? 1000;
  if (!(maxAgeMs >= 0)) throw new TypeError(`maxAgeMs must be a non-negative number, got ${String(maxAgeMs)}`);
  let inFlight: Promise<string> | null = null;
  let last: { body: string; startedAt: number } | null = null;
  const render = (): Promise<string> => {
    if (last !== null && performance.now() - last.startedAt < maxAgeMs) return Promise.resolve(last.body);
    if (inFlight === null) {
      const startedAt = performance.now();
      const p = registry.metrics();
      inFlight = p;
      // A failed render is not kept: the next request tries again.
      p.then((body) => (last = { body, startedAt }), () => {}).finally(() => {
        if (inFlight === p) inFlight = null;
      });
    }
    return inFlight;
  };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    render().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : body),
      (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(e as Error).message}\n`),
    );
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
