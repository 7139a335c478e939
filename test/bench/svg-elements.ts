// The bench charts' tests: reading back the SVG our chart code writes.

/** Attributes of every element named `tag` (the SVG is ours: flat, double-quoted attributes). */
export function elements(svg: string, tag: string): Array<Record<string, string>> {
  const out: Array<Record<string, string>> = [];
  for (const m of svg.matchAll(new RegExp(`<${tag} ([^>]*)>`, 'g'))) {
    const attrs: Record<string, string> = {};
    // name="value" pairs, split without a regex (values hold no quote: ours escapes them).
    for (const pair of m[1].replace(/\/$/, '').trim().split('" ')) {
      const eq = pair.indexOf('="');
      attrs[pair.slice(0, eq)] = pair.slice(eq + 2).replace(/"$/, '');
    }
    out.push(attrs);
  }
  return out;
}
