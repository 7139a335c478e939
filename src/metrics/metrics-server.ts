// GET /metrics from a prom-client Registry over HTTP: the scrape endpoint of
// noshell run. Loopback unless the caller names another address: the series
// carry check ids, commands' perfdata and process details.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  server: http.Server;
  /** http://host:port/metrics, with the port actually bound. */
  url: string;
  close(): Promise<void>;
}

export async function serveMetrics(registry: Registry, options: { host?: string; port: number }): Promise<MetricsServer> {
  const host = options.host ?? '127.0.0.1';
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    registry.metrics().then(
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
