// Series styles for the bench charts: a colour and a marker shape each, so
// two series never look alike (the old 6-colour cycle drew `cp.exec` and
// `noshell.exec` in the same blue), and a series stays readable in grey print.

export type Marker =
  | 'circle' | 'square' | 'triangle-up' | 'diamond' | 'triangle-down' | 'plus' | 'cross' | 'star'
  | 'ring' | 'box' | 'triangle-left' | 'triangle-right' | 'pentagon' | 'hexagon';

/** Fourteen colours that stay apart on white: black, Tableau 10, and three darker ones. */
export const PALETTE = [
  '#000000', '#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b',
  '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#08306b', '#a50f15', '#00441b',
] as const;

export const MARKERS: readonly Marker[] = [
  'circle', 'square', 'triangle-up', 'diamond', 'triangle-down', 'plus', 'cross', 'star',
  'ring', 'box', 'triangle-left', 'triangle-right', 'pentagon', 'hexagon',
];

export interface SeriesStyle {
  color: string;
  marker: Marker;
  /** stroke-dasharray, or '' for a solid line. */
  dash: string;
}

const DASHES = ['', '6 3', '2 3', '8 3 2 3'];

/**
 * Style number i. Colours and markers are each distinct for i < 14; past that
 * the pair (colour, marker) still is (13 markers in the cycle against 14 colours).
 */
export function seriesStyle(i: number): SeriesStyle {
  const color = PALETTE[i % PALETTE.length];
  const marker = i < MARKERS.length ? MARKERS[i] : MARKERS[i % (MARKERS.length - 1)];
  return { color, marker, dash: DASHES[Math.floor(i / 4) % DASHES.length] };
}

function polygon(cx: number, cy: number, r: number, n: number, rotate: number, inner = 1): string {
  const pts: string[] = [];
  const k = inner === 1 ? n : 2 * n;
  for (let j = 0; j < k; j++) {
    const a = rotate + (2 * Math.PI * j) / k;
    const rr = inner !== 1 && j % 2 === 1 ? r * inner : r;
    pts.push(`${(cx + rr * Math.sin(a)).toFixed(1)},${(cy - rr * Math.cos(a)).toFixed(1)}`);
  }
  return pts.join(' ');
}

/** The marker's SVG element at (cx, cy), about 2r across. */
export function markerSvg(m: Marker, cx: number, cy: number, color: string, r = 4.5): string {
  const filled = `fill="${color}" stroke="${color}" stroke-width="1"`;
  const open = `fill="white" stroke="${color}" stroke-width="2"`;
  const p = (pts: string, attrs = filled) => `<polygon points="${pts}" ${attrs}/>`;
  const x = (v: number) => v.toFixed(1);
  switch (m) {
    case 'circle': return `<circle cx="${x(cx)}" cy="${x(cy)}" r="${r}" ${filled}/>`;
    case 'ring': return `<circle cx="${x(cx)}" cy="${x(cy)}" r="${r - 0.5}" ${open}/>`;
    case 'square': return `<rect x="${x(cx - r * 0.85)}" y="${x(cy - r * 0.85)}" width="${x(r * 1.7)}" height="${x(r * 1.7)}" ${filled}/>`;
    case 'box': return `<rect x="${x(cx - r * 0.8)}" y="${x(cy - r * 0.8)}" width="${x(r * 1.6)}" height="${x(r * 1.6)}" ${open}/>`;
    case 'triangle-up': return p(polygon(cx, cy + r * 0.15, r * 1.2, 3, 0));
    case 'triangle-down': return p(polygon(cx, cy - r * 0.15, r * 1.2, 3, Math.PI));
    case 'triangle-left': return p(polygon(cx + r * 0.15, cy, r * 1.2, 3, -Math.PI / 2), open);
    case 'triangle-right': return p(polygon(cx - r * 0.15, cy, r * 1.2, 3, Math.PI / 2), open);
    case 'diamond': return p(polygon(cx, cy, r * 1.25, 4, 0));
    case 'pentagon': return p(polygon(cx, cy, r * 1.1, 5, 0), open);
    case 'hexagon': return p(polygon(cx, cy, r * 1.1, 6, 0));
    case 'star': return p(polygon(cx, cy, r * 1.4, 5, 0, 0.45));
    case 'plus':
      return `<path d="M${x(cx - r)},${x(cy)}H${x(cx + r)}M${x(cx)},${x(cy - r)}V${x(cy + r)}" stroke="${color}" stroke-width="2.5" fill="none"/>`;
    case 'cross': {
      const d = r * 0.8;
      return `<path d="M${x(cx - d)},${x(cy - d)}L${x(cx + d)},${x(cy + d)}M${x(cx - d)},${x(cy + d)}L${x(cx + d)},${x(cy - d)}" ` +
        `stroke="${color}" stroke-width="2.5" fill="none"/>`;
    }
    default: {
      const never: never = m;
      throw new Error(`unknown marker ${String(never)}`);
    }
  }
}
