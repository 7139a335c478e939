// serveMetrics shares renders: a render of 1,000 checks blocks the event loop
// for 90-270 ms, and anyone who can reach the port could ask for one after
// another.
import http from 'node:http';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CheckRunner, createRunnerRegistry, serveMetrics, type MetricsServer } from '../src/index';
import { one, parseExposition } from './metrics-text';

let server: MetricsServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
  vi.restoreAllMocks();
});

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ status: res.statusCode!, body }));
    }).on('error', reject);
  });
}

/** A runner of 200 checks (never started: definitions only) in the registry noshell run serves. */
function bigRegistry(): Registry {
  const runner = new CheckRunner();
  for (let i = 0; i < 200; i++) runner.add({ id: `check-${i}`, command: ['/bin/true'], interval: 60_000 });
  return createRunnerRegistry(runner);
}

describe('/metrics requests share renders', () => {
  it('20 concurrent requests cause one render, and all get the same valid body', async () => {
    const registry = bigRegistry();
    const render = vi.spyOn(registry, 'metrics');
    server = await serveMetrics(registry, { port: 0 });
    const replies = await Promise.all(Array.from({ length: 20 }, () => get(server!.url)));
    expect(render).toHaveBeenCalledTimes(1);
    for (const r of replies) {
      expect(r.status).toBe(200);
      expect(r.body).toBe(replies[0].body);
    }
    const samples = parseExposition(replies[0].body);
    expect(one(samples, 'noshell_check_interval_seconds', { check: 'check-199' })).toBe(60);
  });

  it('concurrent requests wait for the render in flight even with maxAgeMs 0; later ones get a new render', async () => {
    const registry = bigRegistry();
    const real = registry.metrics.bind(registry);
    let n = 0;
    const render = vi.spyOn(registry, 'metrics').mockImplementation(async () => {
      const text = await real();
      await new Promise((r) => setTimeout(r, 200)); // a slow render
      return `${text}# render ${++n}\n`;
    });
    server = await serveMetrics(registry, { port: 0, maxAgeMs: 0 });
    const replies = await Promise.all(Array.from({ length: 20 }, () => get(server!.url)));
    expect(render).toHaveBeenCalledTimes(1);
    expect(new Set(replies.map((r) => r.body)).size).toBe(1);
    expect(replies[0].body).toMatch(/# render 1\n$/);
    expect((await get(server.url)).body).toMatch(/# render 2\n$/);
    expect(render).toHaveBeenCalledTimes(2);
  });

  it('back-to-back requests within maxAgeMs get the last render; after it, a fresh one; a failed render is not kept', async () => {
    const registry = bigRegistry();
    const render = vi.spyOn(registry, 'metrics');
    server = await serveMetrics(registry, { port: 0, maxAgeMs: 300 });
    const a = await get(server.url);
    const b = await get(server.url);
    expect(b.body).toBe(a.body);
    expect(render).toHaveBeenCalledTimes(1);
    await new Promise((r) => setTimeout(r, 350));
    await get(server.url);
    expect(render).toHaveBeenCalledTimes(2);
    await new Promise((r) => setTimeout(r, 350));
    render.mockRejectedValueOnce(new Error('boom'));
    expect(await get(server.url)).toEqual({ status: 500, body: 'boom\n' });
    expect((await get(server.url)).status).toBe(200);
    expect(render).toHaveBeenCalledTimes(4);
  });

  it('the default keeps a render for about a second', async () => {
    const registry = new Registry();
    const render = vi.spyOn(registry, 'metrics');
    server = await serveMetrics(registry, { port: 0 });
    for (let i = 0; i < 10; i++) await get(server.url);
    expect(render).toHaveBeenCalledTimes(1);
    await expect(serveMetrics(registry, { port: 0, maxAgeMs: -1 })).rejects.toThrow(TypeError);
  });
});
