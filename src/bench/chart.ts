// A line chart as plain SVG, written by us (no chart library): one or more
// panels side by side (small multiples) on one y scale, and one legend to
// their right whose size comes from its labels, so nothing is cut off.
import { autoScale, linearScale, logScale, tickLabel, type Scale } from './chart-scale';
import { markerSvg, seriesStyle, type SeriesStyle } from './chart-style';

export interface Point {
  x: number;
  y: number;
}

export interface Series {
  name: string;
  points: Point[];
  /** Style number (see seriesStyle); the same series keeps its look across charts. Default: its place in the legend. */
  style?: number;
}

export interface Panel {
  title: string;
  series: Series[];
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  /** With its unit, e.g. "spawns/s". */
  yLabel: string;
  panels: Panel[];
  /** Default 'auto': log when the values span more than 1.5 decades. */
  yScale?: 'auto' | 'linear' | 'log';
  /** Default: every x value of the data. */
  xTicks?: number[];
}

const FONT = 12;
/** The legend is set in monospace, whose advance is ~0.6 em in every common font: its width is known. */
const MONO = 'DejaVu Sans Mono, Menlo, Consolas, monospace';
const PANEL_W = 330;
const PANEL_H = 300;
const GAP = 40;
const LEFT = 78;
const TOP = 56;
const BOTTOM = 56;
const ROW = 20;
const SWATCH = 34;

/** Width of text in the legend's monospace (0.6 em, rounded up); the title's sans-serif averages less. */
export function textWidth(text: string, fontSize = FONT): number {
  return Array.from(text).length * 0.62 * fontSize;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function yScaleOf(spec: ChartSpec, values: number[]): Scale {
  const positive = values.filter((v) => v > 0);
  if (spec.yScale === 'log') return logScale(Math.min(...positive), Math.max(...positive));
  if (spec.yScale === 'linear') return linearScale(Math.min(...values), Math.max(...values));
  return autoScale(values);
}

/** The legend's order: the series' names in their style order, each once. */
function legendEntries(spec: ChartSpec): Array<{ name: string; style: SeriesStyle }> {
  const byName = new Map<string, number>();
  let next = 0;
  for (const p of spec.panels) {
    for (const s of p.series) if (!byName.has(s.name)) byName.set(s.name, s.style ?? next++);
  }
  return [...byName].sort((a, b) => a[1] - b[1]).map(([name, i]) => ({ name, style: seriesStyle(i) }));
}

export function lineChart(spec: ChartSpec): string {
  const all = spec.panels.flatMap((p) => p.series.flatMap((s) => s.points));
  const ys = yScaleOf(spec, all.map((p) => p.y));
  const xTicks = spec.xTicks ?? [...new Set(all.map((p) => p.x))].sort((a, b) => a - b);
  const x0 = Math.min(...xTicks);
  const x1 = Math.max(...xTicks);
  const xFrac = (v: number) => (x1 === x0 ? 0.5 : (v - x0) / (x1 - x0));
  const entries = legendEntries(spec);
  const styleOf = new Map(entries.map((e) => [e.name, e.style]));

  const n = spec.panels.length;
  const plotsRight = LEFT + n * PANEL_W + (n - 1) * GAP;
  const legendX = plotsRight + 24;
  const legendW = SWATCH + 16 + Math.max(...entries.map((e) => textWidth(e.name)), textWidth('series')) + 8;
  const legendH = 12 + entries.length * ROW;
  const width = Math.ceil(Math.max(legendX + legendW + 12, textWidth(spec.title, 15) + 40));
  const height = Math.ceil(Math.max(TOP + PANEL_H + BOTTOM, TOP + legendH + 12));
  // Inset so a point at either end of x keeps its marker inside the frame.
  const px = (i: number, v: number) => LEFT + i * (PANEL_W + GAP) + 14 + (PANEL_W - 28) * xFrac(v);
  const py = (v: number) => TOP + PANEL_H - PANEL_H * ys.fraction(v);

  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
      `font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="${FONT}">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text class="title" x="${width / 2}" y="22" font-size="15" text-anchor="middle">${esc(spec.title)}</text>`,
    // The y label, rotated, left of the tick labels.
    `<text class="y-label" transform="translate(18 ${TOP + PANEL_H / 2}) rotate(-90)" text-anchor="middle">` +
      `${esc(spec.yLabel)}${ys.kind === 'log' ? ' (log scale)' : ''}</text>`,
  ];
  spec.panels.forEach((panel, i) => {
    const left = LEFT + i * (PANEL_W + GAP);
    out.push(`<g class="panel" data-title="${esc(panel.title)}">`);
    out.push(`<text x="${left + PANEL_W / 2}" y="${TOP - 10}" text-anchor="middle" font-weight="bold">${esc(panel.title)}</text>`);
    for (const t of ys.ticks) {
      const y = py(t).toFixed(1);
      out.push(`<line x1="${left}" y1="${y}" x2="${left + PANEL_W}" y2="${y}" stroke="#e4e4e4"/>`);
      if (i === 0) out.push(`<text class="y-tick" data-value="${t}" x="${left - 6}" y="${Number(y) + 4}" text-anchor="end">${tickLabel(t)}</text>`);
    }
    for (const t of xTicks) {
      const x = px(i, t).toFixed(1);
      out.push(`<line x1="${x}" y1="${TOP + PANEL_H}" x2="${x}" y2="${TOP + PANEL_H + 5}" stroke="black"/>`);
      out.push(`<text class="x-tick" x="${x}" y="${TOP + PANEL_H + 19}" text-anchor="middle">${tickLabel(t)}</text>`);
    }
    out.push(`<rect x="${left}" y="${TOP}" width="${PANEL_W}" height="${PANEL_H}" fill="none" stroke="black"/>`);
    out.push(`<text class="x-label" x="${left + PANEL_W / 2}" y="${TOP + PANEL_H + 42}" text-anchor="middle">${esc(spec.xLabel)}</text>`);
    for (const s of panel.series) {
      const st = styleOf.get(s.name)!;
      const pts = s.points.filter((p) => ys.kind === 'linear' || p.y > 0).sort((a, b) => a.x - b.x);
      out.push(`<g class="series" data-series="${esc(s.name)}" data-color="${st.color}" data-marker="${st.marker}">`);
      if (pts.length > 1) {
        out.push(`<polyline fill="none" stroke="${st.color}" stroke-width="2"${st.dash ? ` stroke-dasharray="${st.dash}"` : ''} ` +
          `points="${pts.map((p) => `${px(i, p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(' ')}"/>`);
      }
      for (const p of pts) out.push(markerSvg(st.marker, px(i, p.x), py(p.y), st.color));
      out.push('</g>');
    }
    out.push('</g>');
  });

  const ly = TOP;
  out.push(`<g class="legend" font-family="${MONO}">`);
  out.push(`<rect class="legend-box" x="${legendX}" y="${ly}" width="${legendW.toFixed(1)}" height="${legendH}" fill="white" stroke="#999"/>`);
  entries.forEach((e, j) => {
    const cy = ly + 6 + ROW * j + ROW / 2;
    out.push(`<line x1="${legendX + 8}" y1="${cy}" x2="${legendX + 8 + SWATCH}" y2="${cy}" stroke="${e.style.color}" stroke-width="2"` +
      `${e.style.dash ? ` stroke-dasharray="${e.style.dash}"` : ''}/>`);
    out.push(markerSvg(e.style.marker, legendX + 8 + SWATCH / 2, cy, e.style.color));
    out.push(`<text x="${legendX + 8 + SWATCH + 8}" y="${cy + 4}">${esc(e.name)}</text>`);
  });
  out.push('</g>', '</svg>');
  return `${out.join('\n')}\n`;
}
