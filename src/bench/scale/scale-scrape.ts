// One scrape of /metrics as Prometheus does it: a fresh connection, GET,
// the whole body read; timed end to end from this side.
import http from 'node:http';

export interface Scrape {
  /** Epoch ms at the request and at the body's last byte. */
  startAt: number;
  endAt: number;
  ms: number;
  bytes: number;
  /** Why it failed (status, error, timeout), or null. */
  error: string | null;
}

export function scrape(url: string, timeoutMs: number): Promise<Scrape> {
  const startAt = Date.now();
  const t0 = performance.now();
  return new Promise((resolve) => {
    let bytes = 0;
    let settled = false;
    const done = (error: string | null) => {
      if (settled) return;
      settled = true;
      resolve({ startAt, endAt: Date.now(), ms: performance.now() - t0, bytes, error });
    };
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.on('data', (d: Buffer) => (bytes += d.length));
      res.on('end', () => done(res.statusCode === 200 ? null : `HTTP ${res.statusCode}`));
      res.on('error', (e) => done(e.message));
    });
    req.on('timeout', () => {
      req.destroy();
      done(`no answer within ${timeoutMs / 1000} s`);
    });
    req.on('error', (e) => done(e.message));
  });
}
