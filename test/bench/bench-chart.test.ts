// The bench charts (src/bench/chart*.ts): what makes them
// readable, asserted on the SVG's structure. memory.svg once drew 13 series
// in 6 repeating colours with its legend cut off at the SVG's right edge.
import { describe, expect, it } from 'vitest';
import { lineChart, type Series } from '../../src/bench/chart';
import { autoScale, linearScale, logScale } from '../../src/bench/chart-scale';
import { MARKERS, PALETTE, seriesStyle } from '../../src/bench/chart-style';
import { elements } from './svg-elements';

function svgSize(svg: string): { width: number; height: number } {
  const a = elements(svg, 'svg')[0];
  return { width: Number(a.width), height: Number(a.height) };
}

function legendTexts(svg: string): string[] {
  const legend = svg.slice(svg.indexOf('<g class="legend"'));
  return [...legend.matchAll(/<text [^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
}

const LONG = 'noshell.execFile[posix_spawn]';

function many(n: number, spread = 100): Series[] {
  return Array.from({ length: n }, (_, i) => ({
    name: i === n - 1 ? LONG : `series ${i}`,
    points: [0, 256, 1024].map((x, j) => ({ x, y: 20 + ((spread * (i + 1)) / n) * (j + 1) })),
  }));
}

describe('bench chart', () => {
  it('gives 13 series 13 different colours and 13 different markers', () => {
    const svg = lineChart({ title: 't', xLabel: 'MiB', yLabel: 'spawns/s', panels: [{ title: 'p', series: many(13) }] });
    const series = elements(svg, 'g class="series"');
    expect(series).toHaveLength(13);
    expect(new Set(series.map((s) => s['data-color'])).size).toBe(13);
    expect(new Set(series.map((s) => s['data-marker'])).size).toBe(13);
  });

  it('has at least 13 colours and markers, each style pair distinct well past them', () => {
    expect(new Set(PALETTE).size).toBeGreaterThanOrEqual(13);
    expect(new Set(MARKERS).size).toBeGreaterThanOrEqual(13);
    const pairs = Array.from({ length: 60 }, (_, i) => seriesStyle(i)).map((s) => `${s.color} ${s.marker}`);
    expect(new Set(pairs).size).toBe(60);
  });

  it('keeps the legend, with room for its longest label, inside the SVG', () => {
    for (const n of [1, 7, 13, 30]) {
      const svg = lineChart({ title: 't', xLabel: 'MiB', yLabel: 'spawns/s', panels: [{ title: 'a', series: many(n) }, { title: 'b', series: many(n) }] });
      const { width, height } = svgSize(svg);
      const box = elements(svg, 'rect class="legend-box"')[0];
      const [x, y, w, h] = [box.x, box.y, box.width, box.height].map(Number);
      expect(x + w, `${n} series`).toBeLessThanOrEqual(width);
      expect(y + h, `${n} series`).toBeLessThanOrEqual(height);
      // Every entry once, even with series shared by two panels.
      expect(legendTexts(svg)).toHaveLength(n);
      // Monospace: 0.6 em per character at 12 px, after a 34 px swatch and margins.
      expect(w).toBeGreaterThanOrEqual(LONG.length * 0.6 * 12 + 34 + 16);
      // Outside the plots: to the right of every panel's frame.
      const frames = elements(svg, 'rect').filter((r) => r.fill === 'none' && r.stroke === 'black');
      for (const f of frames) expect(Number(f.x) + Number(f.width)).toBeLessThan(x);
    }
  });

  it('uses a log axis with 1-2-5 ticks when the rates span 20/s to 2,000/s, and a linear one otherwise', () => {
    const wide = lineChart({
      title: 't', xLabel: 'MiB', yLabel: 'spawns/s',
      panels: [{ title: 'p', series: [{ name: 'slow', points: [{ x: 0, y: 300 }, { x: 1024, y: 20 }] }, { name: 'fast', points: [{ x: 0, y: 2000 }, { x: 1024, y: 1900 }] }] }],
    });
    const ticks = elements(wide, 'text class="y-tick"').map((t) => Number(t['data-value']));
    expect(ticks).toEqual([20, 50, 100, 200, 500, 1000, 2000]);
    expect(wide).toContain('spawns/s (log scale)');
    const narrow = lineChart({ title: 't', xLabel: 'MiB', yLabel: 'spawns/s', panels: [{ title: 'p', series: many(3, 20) }] });
    expect(narrow).not.toContain('log scale');
    const lin = elements(narrow, 'text class="y-tick"').map((t) => Number(t['data-value']));
    expect(lin[0]).toBe(0);
    expect(lin[1] - lin[0]).toBeCloseTo(lin[2] - lin[1]);
  });

  it('scales: a log axis covers its data, ticks 1-2-5 (powers of ten only past four decades); auto switches past 1.5 decades', () => {
    const s = logScale(23, 1870);
    expect(s.min).toBeLessThan(23);
    expect(s.max).toBeGreaterThan(1870);
    expect(s.ticks).toEqual([20, 50, 100, 200, 500, 1000, 2000]);
    // Margins of 5 % of the span: no point on the frame.
    expect(s.fraction(23)).toBeCloseTo(0.05 / 1.1);
    expect(s.fraction(1870)).toBeCloseTo(1.05 / 1.1);
    expect(logScale(0.5, 2e5).ticks).toEqual([1, 10, 100, 1000, 1e4, 1e5]);
    expect(autoScale([30, 900]).kind).toBe('linear');
    expect(autoScale([20, 2000]).kind).toBe('log');
    expect(autoScale([0, 2000]).kind).toBe('linear');
    expect(linearScale(0, 0.3).ticks).toEqual([0, 0.1, 0.2, 0.3, 0.4]);
    expect(linearScale(0, 0.27).ticks).toEqual([0, 0.1, 0.2, 0.3]);
  });

  it('labels both axes, with units, and escapes text', () => {
    const svg = lineChart({ title: 'a < b & c', xLabel: 'Buffers held (MiB)', yLabel: 'spawns/s', panels: [{ title: 'p', series: many(2) }] });
    expect(svg).toContain('a &lt; b &amp; c');
    expect(svg).toContain('>Buffers held (MiB)</text>');
    expect(svg).toContain('class="y-label"');
  });
});
