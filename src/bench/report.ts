// Tables (with ratios against child_process.exec and the C reference) and an
// SVG chart of spawns/s against the parent's memory.
import type { Measurement } from './measure';

const REF = 'C reference';
const BASE = 'cp.exec';

function fmt(n: number | null, digits = 0): string {
  return n === null || Number.isNaN(n) ? '-' : n.toFixed(digits);
}

function groupKey(m: Measurement): string {
  return `${m.workload} | concurrency ${m.concurrency} | heap ${m.heapMiB === 0 ? 'small' : `${m.heapMiB} MiB`}`;
}

/** Groups measurements taken side by side and prints one table per group. */
export function formatTables(results: Measurement[]): string {
  const groups = new Map<string, Measurement[]>();
  for (const m of results) {
    const key = groupKey(m);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(m);
  }
  const lines: string[] = [];
  for (const [key, rows] of groups) {
    const ref = rows.find((r) => r.driver === REF)?.spawnsPerSec ?? NaN;
    const base = rows.find((r) => r.driver === BASE)?.spawnsPerSec ?? NaN;
    lines.push('', `### ${key}`, '');
    // Without a C compiler there is no reference row, so no "% of C" column.
    const hasRef = !Number.isNaN(ref);
    lines.push(`| driver | spawns/s | rounds | × cp.exec |${hasRef ? ' % of C |' : ''} parent CPU ms/1k | child CPU ms/1k | blocked p50 ms | blocked p99 ms | loop delay p99 ms |`);
    lines.push(`|---|--:|--:|--:|${hasRef ? '--:|' : ''}--:|--:|--:|--:|--:|`);
    for (const r of rows) {
      const spread = r.roundsPerSec.length > 1 ? `${fmt(Math.min(...r.roundsPerSec))}–${fmt(Math.max(...r.roundsPerSec))}` : '-';
      lines.push(`| ${r.driver} | ${fmt(r.spawnsPerSec)} | ${spread} | ${fmt(r.spawnsPerSec / base, 2)} |` +
        `${hasRef ? ` ${fmt((100 * r.spawnsPerSec) / ref)}% |` : ''} ` +
        `${fmt(r.parentCpuMsPer1k)} | ${fmt(r.childCpuMsPer1k)} | ${fmt(r.blockedP50Ms, 3)} | ${fmt(r.blockedP99Ms, 3)} | ${fmt(r.loopDelayP99Ms ?? null, 2)} |`);
    }
  }
  return lines.join('\n');
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

/** Line chart: x = parent memory held (MiB), y = spawns/s, one line per driver. */
export function memoryChart(results: Measurement[], workload: string, concurrency: number): string {
  const rows = results.filter((m) => m.workload === workload && m.concurrency === concurrency);
  const drivers = [...new Set(rows.map((r) => r.driver))];
  const heaps = [...new Set(rows.map((r) => r.heapMiB))].sort((a, b) => a - b);
  const W = 640, H = 400, L = 70, R = 180, T = 40, B = 50;
  const maxY = Math.max(1, ...rows.map((r) => r.spawnsPerSec)) * 1.1;
  const maxX = Math.max(1, ...heaps);
  const x = (v: number) => L + ((W - L - R) * v) / maxX;
  const y = (v: number) => H - B - ((H - T - B) * v) / maxY;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2 - 60}" y="20" font-size="14">spawns/s vs parent memory (${workload}, concurrency ${concurrency})</text>`,
    `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="black"/>`,
    `<line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="black"/>`,
    `<text x="${(L + W - R) / 2 - 60}" y="${H - 12}">parent memory held (MiB)</text>`,
  ];
  for (const h of heaps) out.push(`<text x="${x(h) - 10}" y="${H - B + 16}">${h}</text>`);
  for (let i = 0; i <= 4; i++) {
    const v = (maxY * i) / 4;
    out.push(`<text x="${L - 45}" y="${y(v) + 4}">${v.toFixed(0)}</text>`);
    out.push(`<line x1="${L}" y1="${y(v)}" x2="${W - R}" y2="${y(v)}" stroke="#ddd"/>`);
  }
  drivers.forEach((d, i) => {
    const pts = rows.filter((r) => r.driver === d).sort((a, b) => a.heapMiB - b.heapMiB);
    const color = COLORS[i % COLORS.length];
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map((p) => `${x(p.heapMiB)},${y(p.spawnsPerSec)}`).join(' ')}"/>`);
    for (const p of pts) out.push(`<circle cx="${x(p.heapMiB)}" cy="${y(p.spawnsPerSec)}" r="3" fill="${color}"/>`);
    out.push(`<text x="${W - R + 10}" y="${T + 20 + i * 18}" fill="${color}">${d}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}
