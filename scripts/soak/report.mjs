// The soak's table rows and its closing verdict.

const MiB = 1024 * 1024;
const cols = [
  ['sample', 8], ['ops', 9], ['failed', 6], ['ops/s', 7], ['elapsed', 8], ['fds', 5], ['threads', 8], ['children', 9], ['RSS MiB', 8], ['heap MiB', 9],
];

export function printHeader(log, { total, concurrency }) {
  log(`soak: ${total} operations, ${concurrency} at a time, pid ${process.pid}, Node ${process.version}`);
  log(cols.map(([name, w]) => name.padStart(w)).join(' '));
}

export function printRow(log, r) {
  const cells = [
    r.label, String(r.ops), String(r.failed), r.label === 'start' ? '-' : r.opsPerSec.toFixed(0), `${r.elapsedS.toFixed(0)}s`,
    String(r.fds), String(r.threads), String(r.children), (r.rss / MiB).toFixed(1), (r.heapUsed / MiB).toFixed(1),
  ];
  log(cells.map((c, k) => c.padStart(cols[k][1])).join(' '));
}

/** Flat fds/threads/children over the last half, RSS growth under the bound, no failed op. */
export function verdict({ total, done, concurrency, elapsedS, first, mid, last, samples, failures, failuresByOp, maxRssGrowth }) {
  const rssGrowthPct = rssTrendPct(samples.filter((s) => s.ops >= mid.ops), mid.ops, last.ops);
  const growth = {
    fds: last.fds - mid.fds,
    threads: last.threads - mid.threads,
    children: last.children - mid.children,
    rssPct: Number(rssGrowthPct.toFixed(2)),
    rssMidToEndPct: Number((((last.rss - mid.rss) / mid.rss) * 100).toFixed(2)),
    heapUsedPct: Number((((last.heapUsed - mid.heapUsed) / mid.heapUsed) * 100).toFixed(2)),
  };
  const problems = [];
  if (done !== total) problems.push(`${done} of ${total} operations done`);
  if (failures.length > 0) problems.push(`${Object.values(failuresByOp).reduce((a, b) => a + b, 0)} operations failed`);
  if (growth.fds !== 0) problems.push(`fds ${mid.fds} → ${last.fds}`);
  if (growth.threads !== 0) problems.push(`threads ${mid.threads} → ${last.threads}`);
  if (last.children !== 0 || growth.children !== 0) problems.push(`children ${mid.children} → ${last.children}`);
  if (!(rssGrowthPct < maxRssGrowth)) problems.push(`RSS grew ${rssGrowthPct.toFixed(2)} % (bound ${maxRssGrowth} %)`);
  const summary = {
    ok: problems.length === 0, problems, ops: done, concurrency, elapsedS: Number(elapsedS.toFixed(1)),
    opsPerSec: Number((done / elapsedS).toFixed(1)), maxRssGrowthPct: maxRssGrowth,
    start: pick(first), mid: pick(mid), end: pick(last), growth, failuresByOp, failures,
  };
  const lines = [
    `last half (ops ${mid.ops} → ${last.ops}): fds ${mid.fds} → ${last.fds}, threads ${mid.threads} → ${last.threads}, ` +
      `children ${mid.children} → ${last.children}, RSS ${(mid.rss / MiB).toFixed(1)} → ${(last.rss / MiB).toFixed(1)} MiB ` +
      `(trend ${growth.rssPct >= 0 ? '+' : ''}${growth.rssPct} %), heap used ${(mid.heapUsed / MiB).toFixed(1)} → ${(last.heapUsed / MiB).toFixed(1)} MiB`,
    `${done} operations in ${elapsedS.toFixed(0)} s (${summary.opsPerSec}/s overall)`,
    ...failures.map((f) => `  failed: ${f}`),
    summary.ok ? 'PASS' : `FAIL: ${problems.join('; ')}`,
  ];
  return { summary, lines };
}

/**
 * RSS growth over [from, to] in % of its level at `from`: the least-squares
 * line through the quiescent samples of that stretch. Single samples of a
 * flat run move by ±5 % (V8 resizing its young generation, malloc arenas),
 * so comparing two of them says more about where they fell than about a
 * trend; a leak is a slope.
 */
export function rssTrendPct(points, from, to) {
  if (points.length < 2) return 0;
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.ops, 0) / n;
  const my = points.reduce((a, p) => a + p.rss, 0) / n;
  const sxx = points.reduce((a, p) => a + (p.ops - mx) ** 2, 0);
  if (sxx === 0) return 0;
  const slope = points.reduce((a, p) => a + (p.ops - mx) * (p.rss - my), 0) / sxx;
  const atFrom = my + slope * (from - mx);
  return ((slope * (to - from)) / atFrom) * 100;
}

function pick(s) {
  return { ops: s.ops, fds: s.fds, threads: s.threads, children: s.children, rss: s.rss, heapUsed: s.heapUsed };
}
