// The soak's table rows and its closing verdict.

const MiB = 1024 * 1024;
const cols = [
  ['sample', 8], ['ops', 9], ['failed', 6], ['ops/s', 7], ['elapsed', 8], ['fds', 5], ['threads', 8], ['children', 9],
  ['RSS MiB', 8], ['young MiB', 10], ['rest MiB', 9], ['heap MiB', 9],
];

export function printHeader(log, { warmup, measured, concurrency }) {
  log(`soak: ${warmup} warm-up then ${measured} measured operations, ${concurrency} at a time, pid ${process.pid}, Node ${process.version}`);
  log('(young: V8\'s young generation, resident; rest: RSS outside it, the figure bounded; heap: V8 heap used after a full GC)');
  log(cols.map(([name, w]) => name.padStart(w)).join(' '));
}

export function printRow(log, r) {
  const cells = [
    r.label, String(r.ops), String(r.failed), r.label === 'start' ? '-' : r.opsPerSec.toFixed(0), `${r.elapsedS.toFixed(0)}s`,
    String(r.fds), String(r.threads), String(r.children),
    ...[r.rss, r.young, r.rssOutsideYoung, r.heapUsed].map((b) => (b / MiB).toFixed(1)),
  ];
  log(cells.map((c, k) => c.padStart(cols[k][1])).join(' '));
}

/**
 * No failed op; fds and children the same at every sample; from the baseline
 * (the sample after the warm-up) to the end, the same threads, and memory
 * level: RSS outside V8's young generation and V8's heap used, each as its
 * lowest sample in each third of the measured operations, its growth the
 * least of first → last third and twice each step between thirds.
 *
 * Why these figures. The young generation cannot hold a leak (see
 * youngGenBytes) but is most of a healthy run's RSS movement (Node 24 grows it
 * to 128 MiB over the first ~20,000 operations, RSS following as its pages are
 * first used). A leak of JS objects grows old space (heap used, after a full
 * GC), a native one malloc's heap: both are in the rest of RSS.
 * Why the lowest sample of each third, not a line through all of them: what
 * moves a healthy run's samples is memory held for a while and given back —
 * pages V8 keeps pooled for some seconds after resizing its young generation
 * (Node 26: +8 MiB for 10,000 operations, then gone), malloc arenas — which
 * lifts single samples and can tilt a line by 10 % over 30,000 operations. A
 * leak lifts the floor, and keeps lifting it.
 */
export function verdict({ warmup, measured, done, concurrency, elapsedS, first, baseline, last, samples, failures, failuresByOp, maxRssGrowth, maxHeapGrowth }) {
  const window = samples.filter((s) => s.ops >= baseline.ops);
  const thirds = [0, 1, 2].map((k) => {
    const from = baseline.ops + Math.floor((measured * k) / 3);
    const to = k === 2 ? last.ops : baseline.ops + Math.floor((measured * (k + 1)) / 3);
    return window.filter((s) => s.ops >= from && (k === 2 ? s.ops <= to : s.ops < to));
  });
  const round = (v) => Number(v.toFixed(2));
  const floors = (key) => thirds.map((t) => (t.length > 0 ? Math.min(...t.map((s) => s[key])) : NaN));
  // A leak lifts the floor in both halves of the window; memory that settles
  // late (a step once, then level) lifts only one. So the growth bounded is
  // the least of first → last third and twice each step between thirds: a
  // steady leak gives about the same for all three, a step ~0 for one of them
  // (a fresh-clone CI run on Node 26 stepped 70.8 → 79.2 → 79.0 MiB: +11.6 %
  // first to last, -0.6 % for the second step).
  const floorGrowth = (f) => round((Math.min(f[2] - f[0], 2 * (f[1] - f[0]), 2 * (f[2] - f[1])) / f[0]) * 100);
  const restFloors = floors('rssOutsideYoung');
  const rssFloors = floors('rss');
  const heapFloors = floors('heapUsed');
  const growth = {
    fds: last.fds - baseline.fds,
    threads: last.threads - baseline.threads,
    children: last.children - baseline.children,
    rssOutsideYoungPct: floorGrowth(restFloors),
    heapUsedPct: floorGrowth(heapFloors),
    rssPct: floorGrowth(rssFloors),
    // The least-squares lines, for the record: not bounded.
    rssOutsideYoungTrendPct: round(trendPct(window, baseline.ops, last.ops, 'rssOutsideYoung')),
    rssTrendPct: round(trendPct(window, baseline.ops, last.ops, 'rss')),
  };
  const total = warmup + measured;
  const problems = [];
  if (done !== total) problems.push(`${done} of ${total} operations done`);
  if (failures.length > 0) problems.push(`${Object.values(failuresByOp).reduce((a, b) => a + b, 0)} operations failed`);
  const off = samples.filter((s) => s.fds !== first.fds || s.children !== 0);
  if (off.length > 0) problems.push(`${off.length} samples with fds other than ${first.fds} or a child left (first at op ${off[0].ops})`);
  if (growth.threads !== 0) problems.push(`threads ${baseline.threads} → ${last.threads}`);
  if (!(growth.rssOutsideYoungPct < maxRssGrowth)) {
    problems.push(`RSS outside the young generation grew ${growth.rssOutsideYoungPct} % after the warm-up (bound ${maxRssGrowth} %)`);
  }
  if (!(growth.heapUsedPct < maxHeapGrowth)) problems.push(`heap used grew ${growth.heapUsedPct} % after the warm-up (bound ${maxHeapGrowth} %)`);
  const mib = (b) => (b / MiB).toFixed(1);
  const summary = {
    ok: problems.length === 0, problems, ops: done, warmup, measured, concurrency, elapsedS: Number(elapsedS.toFixed(1)),
    opsPerSec: Number((done / elapsedS).toFixed(1)), maxRssGrowthPct: maxRssGrowth, maxHeapGrowthPct: maxHeapGrowth,
    start: pick(first), baseline: pick(baseline), end: pick(last), growth,
    floors: { rssOutsideYoung: restFloors, rss: rssFloors, heapUsed: heapFloors }, failuresByOp, failures,
  };
  const signed = (v) => `${v >= 0 ? '+' : ''}${v} %`;
  const fl = (f, pct) => `${f.map(mib).join(', ')} MiB (${signed(pct)})`;
  const lines = [
    `warm-up (ops ${first.ops} → ${baseline.ops}): RSS ${mib(first.rss)} → ${mib(baseline.rss)} MiB ` +
      `(young generation ${mib(first.young)} → ${mib(baseline.young)}, the rest ${mib(first.rssOutsideYoung)} → ${mib(baseline.rssOutsideYoung)})`,
    `measured (ops ${baseline.ops} → ${last.ops}): fds ${baseline.fds} → ${last.fds}, threads ${baseline.threads} → ${last.threads}, ` +
      `children ${baseline.children} → ${last.children}; lowest sample of each third (${thirds.map((t) => t.length).join('/')} samples), growth the least of first → last and twice each step:`,
    `  RSS outside the young generation ${fl(restFloors, growth.rssOutsideYoungPct)}, bound ${maxRssGrowth} %`,
    `  heap used ${fl(heapFloors, growth.heapUsedPct)}, bound ${maxHeapGrowth} %`,
    `  RSS ${fl(rssFloors, growth.rssPct)}; RSS ${mib(baseline.rss)} → ${mib(last.rss)} MiB`,
    `${done} operations in ${elapsedS.toFixed(0)} s (${summary.opsPerSec}/s overall)`,
    ...failures.map((f) => `  failed: ${f}`),
    summary.ok ? 'PASS' : `FAIL: ${problems.join('; ')}`,
  ];
  return { summary, lines };
}

/**
 * Growth of a figure (RSS unless told) over [from, to] in % of its level at
 * `from`: the least-squares line through the quiescent samples of that
 * stretch. Single samples of a flat run move by a few % (malloc arenas, which
 * young-generation pages were touched), so comparing two of them says more
 * about where they fell than about a trend; a leak is a slope.
 */
export function trendPct(points, from, to, key = 'rss') {
  if (points.length < 2) return 0;
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.ops, 0) / n;
  const my = points.reduce((a, p) => a + p[key], 0) / n;
  const sxx = points.reduce((a, p) => a + (p.ops - mx) ** 2, 0);
  if (sxx === 0) return 0;
  const slope = points.reduce((a, p) => a + (p.ops - mx) * (p[key] - my), 0) / sxx;
  const atFrom = my + slope * (from - mx);
  return ((slope * (to - from)) / atFrom) * 100;
}

function pick(s) {
  const { ops, fds, threads, children, rss, young, rssOutsideYoung, heapUsed, heapTotal } = s;
  return { ops, fds, threads, children, rss, young, rssOutsideYoung, heapUsed, heapTotal };
}
