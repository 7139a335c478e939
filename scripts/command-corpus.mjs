// node scripts/command-corpus.mjs [CORPUS.json] [--lines] [--width N]
//
// How much of a corpus of real monitoring command lines runs without /bin/sh:
// runs parseCommand (dist/index.js; `npm run build:ts` first) on the
// `expanded` line of every entry of CORPUS (default
// test/fixtures/command-corpus.json) and prints
//   (a) the share with needsShell false, overall and per source (the
//       `source` field up to its first space: a Debian package or a
//       repository at a commit);
//   (b) the same by kind of source: installed Debian configs (`debian:`)
//       and public repositories (`github:`);
//   (c) for the lines that still need a shell, each reason with the number
//       of lines giving it and its 3 most common lines (the same line counts
//       once per source it came from);
//   (d) of the lines that need no shell: how many are one plain command, a
//       pipeline, a list (`;`, `&&`, `||`), or have a redirection.
// --lines also prints every line that needs a shell, with its reasons;
// --width N cuts the example lines at N characters (default 160, 0: never);
// control characters are shown escaped (\n, \t, \x1b, \u0082).
//
// The corpus holds command_line values from Nagios-style object configs with
// their macros already expanded as Nagios would (its `about` field says
// which values stand in for $USER1$, $HOSTADDRESS$, $ARGn$, …), so each
// `expanded` line is the string Nagios would hand to /bin/sh -c. The
// substitutions (the corpus' `macros` has the full table): $USER1$
// /usr/lib/nagios/plugins, other $USERn$ s3cret, every $ARGn$ and custom
// variable ($_HOSTSNMPCOMMUNITY$, …) 10, $HOSTADDRESS$ 192.0.2.1,
// $HOSTNAME$ web01, $HOSTALIAS$ web01.example.org, $SERVICEDESC$ Disk,
// $HOSTSTATE$ DOWN, $SERVICESTATE$ CRITICAL, $NOTIFICATIONTYPE$ PROBLEM,
// $HOSTOUTPUT$ and $SERVICEOUTPUT$ `OK - fine`, $HOSTPERFDATA$ rta=0.5ms,
// $SERVICEPERFDATA$ time=0.1s, $CONTACTEMAIL$ nagios@example.org,
// $CONTACTPAGER$ 5550100, $LONGDATETIME$ `Thu Jan 1 12:00:00 UTC 2026`,
// $SHORTDATETIME$ `2026-01-01 12:00:00`, $TIMET$ and $LAST…CHECK$
// 1767268800, `$$` a `$`; an unknown $NAME$ stays as written (Nagios,
// Naemon, Icinga 1) or becomes '' (Shinken), as those cores do.
// A development tool over dist/, not part of the package. It looks at the
// lines only through parseCommand and char codes: no regular expressions.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';

const require = createRequire(import.meta.url);
const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    lines: { type: 'boolean', default: false },
    width: { type: 'string', default: '160' },
  },
});
const corpusPath = positionals[0] ?? path.resolve(import.meta.dirname, '..', 'test', 'fixtures', 'command-corpus.json');
const width = Number(opts.width);
if (!Number.isInteger(width) || width < 0) throw new Error(`--width: not a count: ${opts.width}`);

const { parseCommand } = require('../dist/index.js');
const corpus = JSON.parse(readFileSync(corpusPath, 'utf8'));
if (!Array.isArray(corpus.entries)) throw new Error(`${corpusPath}: no entries array`);

/** The source of an entry: its `source` up to the first space. */
function sourceOf(entry) {
  const s = entry.source;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 32) return s.slice(0, i);
  return s;
}

/** `debian`, `github`, …: the source up to its first colon. */
function kindOf(source) {
  for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 58) return source.slice(0, i);
  return source;
}

/** One line for the tables: control characters shown as \n, \t, \xNN; cut at `width`. */
function show(line) {
  let out = '';
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 10) out += '\\n';
    else if (c === 9) out += '\\t';
    else if (c < 32 || c === 127) out += '\\x' + c.toString(16).padStart(2, '0');
    else if (c >= 0x80 && c < 0xa0) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += line[i];
  }
  return width > 0 && out.length > width ? out.slice(0, width - 1) + '…' : out;
}

const pct = (n, total) => (total === 0 ? '   -  ' : `${((100 * n) / total).toFixed(1).padStart(5)}%`);

/** A tally of shell-free lines against all lines, by key. */
class Tally {
  constructor() {
    this.map = new Map();
  }
  add(key, free) {
    let t = this.map.get(key);
    if (!t) this.map.set(key, (t = { total: 0, free: 0 }));
    t.total++;
    if (free) t.free++;
  }
  print(title) {
    const rows = [...this.map].sort((a, b) => b[1].total - a[1].total || (a[0] < b[0] ? -1 : 1));
    const w = Math.max(title.length, ...rows.map(([k]) => k.length));
    console.log(`${title.padEnd(w)}  lines  no shell  share`);
    for (const [k, t] of rows) {
      console.log(`${k.padEnd(w)}  ${String(t.total).padStart(5)}  ${String(t.free).padStart(8)}  ${pct(t.free, t.total)}`);
    }
  }
}

const bySource = new Tally();
const byKind = new Tally();
/** reason -> { count, lines: Map(line -> times) } */
const reasons = new Map();
const needing = [];
let total = 0;
let free = 0;
const shape = { simple: 0, pipeline: 0, list: 0, redirection: 0, pipelineAndList: 0 };

for (const entry of corpus.entries) {
  const line = entry.expanded;
  const source = sourceOf(entry);
  const p = parseCommand(line);
  total++;
  bySource.add(source, !p.needsShell);
  byKind.add(kindOf(source), !p.needsShell);
  if (p.needsShell) {
    needing.push({ entry, reasons: p.reasons });
    for (const r of p.reasons) {
      let t = reasons.get(r);
      if (!t) reasons.set(r, (t = { count: 0, lines: new Map() }));
      t.count++;
      t.lines.set(line, (t.lines.get(line) ?? 0) + 1);
    }
    continue;
  }
  free++;
  const isPipeline = p.list.some((pl) => pl.stages.length > 1);
  const isList = p.list.length > 1;
  const hasRedirect = p.list.some((pl) => pl.stages.some((st) => st.redirects.length > 0));
  if (p.simple) shape.simple++;
  if (isPipeline) shape.pipeline++;
  if (isList) shape.list++;
  if (isPipeline && isList) shape.pipelineAndList++;
  if (hasRedirect) shape.redirection++;
}

console.log(`corpus: ${corpusPath}`);
console.log(`${total} lines from ${bySource.map.size} sources\n`);
console.log(`(a) runs without a shell: ${free} of ${total} lines, ${pct(free, total).trim()}\n`);
bySource.print('source');
console.log('\n(b) by kind of source\n');
byKind.print('kind');

console.log(`\n(c) reasons among the ${total - free} lines that need a shell (a line can give several)\n`);
const reasonRows = [...reasons].sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : 1));
const rw = Math.max(6, ...reasonRows.map(([r]) => r.length));
console.log(`${'reason'.padEnd(rw)}  lines  share of those needing a shell`);
for (const [r, t] of reasonRows) console.log(`${r.padEnd(rw)}  ${String(t.count).padStart(5)}  ${pct(t.count, total - free)}`);
for (const [r, t] of reasonRows) {
  console.log(`\n${r} (${t.count}):`);
  // The 3 most common lines; first seen first among equals (Map keeps insertion order, sort is stable).
  const top = [...t.lines].sort((a, b) => b[1] - a[1]).slice(0, 3);
  for (const [line, times] of top) console.log(`  ${times > 1 ? `${times}x ` : ''}${show(line)}`);
}

console.log(`\n(d) the ${free} lines that need no shell\n`);
console.log(`one command, no redirection  ${String(shape.simple).padStart(5)}`);
console.log(`pipelines (a | b)            ${String(shape.pipeline).padStart(5)}`);
console.log(`lists (; && ||)              ${String(shape.list).padStart(5)}${shape.pipelineAndList ? `  (${shape.pipelineAndList} of them with a pipeline too)` : ''}`);
console.log(`with a redirection           ${String(shape.redirection).padStart(5)}`);

if (opts.lines) {
  console.log(`\nlines that need a shell (${needing.length})\n`);
  for (const { entry, reasons: rs } of needing) console.log(`${entry.source}\n  [${rs.join(', ')}] ${show(entry.expanded)}`);
}
