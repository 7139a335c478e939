// node --expose-gc scripts/metrics-scale.mjs [--checks 1000,20000,100000] [--before DIST] [--skip-before] [--json]
//
// Scrape cost at scale (issue 19): a CheckRunner of N checks, each with a
// last result of five perfdata items (one real run of printf through
// runCheck, copied per check with its own id and times: nothing else runs),
// scraped
//   - before: DIST's from-scratch render (default ../main/dist, read only)
//     and its prom-client registry (what noshell run served);
//   - after: runner.metrics() cold (every check rendered) and warm (1 % of
//     the checks with a new result), runner.metricsChunks() with the
//     longest event-loop block during it (monitorEventLoopDelay, 1 ms), and
//     GET /metrics of createRunnerSource through serveMetrics end to end.
// A development tool over dist/, not part of the package.
import { readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { values: args } = parseArgs({
  options: {
    checks: { type: 'string', default: '1000,20000,100000' },
    before: { type: 'string', default: path.resolve(import.meta.dirname, '..', '..', 'main', 'dist') },
    json: { type: 'boolean', default: false },
    'skip-before': { type: 'boolean', default: false },
  },
});
const after = require('../dist/index.js');
const before = { index: require(path.join(args.before, 'index.js')), metrics: require(path.join(args.before, 'check', 'metrics.js')) };

const OUTPUT = 'PING OK | rta=0.1ms;100;500;0 pl=0%;20;60;0;100 rtmax=0.5ms rtmin=0.05ms used=1024KB;;;0;1000000';
const template = await after.runCheck(['/usr/bin/printf', '%s\n', OUTPUT]);
if (template.perfdata.length !== 5) throw new Error(`expected 5 perfdata items, got ${template.perfdata.length}`);

/** A runner's checks with injected results: what metrics read of a CheckRunner. */
function source(lib, n) {
  const runner = new lib.CheckRunner();
  for (let i = 0; i < n; i++) runner.add({ id: `host-${i}/ping`, command: ['/bin/true'], interval: 60_000 });
  const lasts = new Map();
  const base = Date.now();
  const setResult = (id, i, k) => lasts.set(id, {
    ...template, state: (i + k) % 4, id, attempt: 1, maxAttempts: 1, stateType: 'HARD',
    scheduledAt: base + i + k, startedAt: base + i + k + 1, finishedAt: base + i + k + 2, latencyMs: 1,
  });
  for (let i = 0; i < n; i++) setResult(`host-${i}/ping`, i, 0);
  return {
    stats: () => runner.stats(),
    checkStatus: () => runner.checkStatus().map((s) => ({ ...s, last: lasts.get(s.id), lastStateChangeAt: lasts.get(s.id).finishedAt })),
    /** New results for every 100th check. */
    churn: (k) => {
      for (let i = 0; i < n; i += 100) setResult(`host-${i}/ping`, i, k);
    },
  };
}

const ms = (t0) => Number((performance.now() - t0).toFixed(1));

async function blockDuring(fn) {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t0 = performance.now();
  const out = await fn();
  const total = ms(t0);
  h.disable();
  // The histogram counts the delay past its 1 ms resolution timer.
  return { total, maxBlockMs: Number((h.max / 1e6).toFixed(1)), out };
}

/** Wall and CPU ms of a synchronous call (the machine may be shared: CPU time is the steadier figure). */
function time(fn) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const out = fn();
  const c = process.cpuUsage(c0);
  return { ms: ms(t0), cpuMs: Math.round((c.user + c.system) / 1000), out };
}

// node:http rather than fetch (warm-up only): fetch loads undici on first use, in this process, during the measurement.
function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false }, (res) => {
      const parts = [];
      res.setEncoding('utf8').on('data', (d) => parts.push(d)).on('end', () => resolve(parts.join('')));
    }).on('error', reject);
  });
}

const load = () => os.loadavg()[0].toFixed(1);

const rows = [];
for (const n of args.checks.split(',').map(Number)) {
  const row = { checks: n, loadavg: load() };
  if (!args['skip-before']) {
    const src = source(before.index, n);
    const r = time(() => before.metrics.formatMetrics(src));
    row.beforeTextMs = r.ms;
    row.beforeTextCpuMs = r.cpuMs;
    row.mb = Number((r.out.length / 2 ** 20).toFixed(1));
    row.samples = r.out.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
    if (n <= 20_000) {
      const registry = before.index.createRunnerRegistry(src);
      row.beforeRegistryMs = (await blockDuring(() => registry.metrics())).total;
    }
  }
  global.gc?.();
  const src = source(after, n);
  const { formatMetrics, metricsChunks } = require('../dist/metrics/scrape/runner-text.js');
  const cold = time(() => formatMetrics(src));
  row.afterColdMs = cold.ms;
  row.afterColdCpuMs = cold.cpuMs;
  const warm = time(() => formatMetrics(src));
  row.afterWarmMs = warm.ms;
  row.afterWarmCpuMs = warm.cpuMs;
  src.churn(1);
  const churned = time(() => formatMetrics(src));
  row.afterChurn1pcMs = churned.ms;
  row.afterChurn1pcCpuMs = churned.cpuMs;
  src.churn(2);
  const streamed = await blockDuring(async () => {
    let len = 0;
    for await (const c of metricsChunks(src)) len += c.length;
    return len;
  });
  row.chunksMs = streamed.total;
  row.chunksMaxBlockMs = streamed.maxBlockMs;
  const server = await after.serveMetrics(after.createRunnerSource(src), { port: 0, maxAgeMs: 0 });
  await get(server.url); // prom-client's default metrics make their first readings
  src.churn(3);
  // The scraper is another process (as Prometheus is): its reading is not this event loop's work.
  // Started through noshell: child_process would fork() this large process on the event loop.
  const file = path.join(os.tmpdir(), `metrics-scale-${process.pid}.txt`);
  const scraped = await blockDuring(() => after.execFile('curl', ['-sf', '-o', file, server.url]));
  await server.close();
  row.httpMs = scraped.total;
  row.httpMaxBlockMs = scraped.maxBlockMs;
  const body = readFileSync(file, 'utf8');
  rmSync(file);
  // The executor's series moved: it ran curl.
  const steady = (t) => t.split('\n').filter((l) => !l.startsWith('noshell_executor_')).join('\n');
  if (!steady(body).endsWith(steady(formatMetrics(src)))) throw new Error('HTTP body differs from runner.metrics()');
  rows.push(row);
  if (!args.json) console.log(JSON.stringify(row));
  global.gc?.();
}
if (args.json) console.log(JSON.stringify(rows, null, 2));
