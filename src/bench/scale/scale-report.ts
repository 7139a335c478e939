// The tables of `noshell bench --scale`: one row per size for start, memory,
// scrapes and latency; one row per size and reload for the reloads.
import { fmtMs } from '../spawn/report';
import type { Latency } from './scale-figures';
import type { FullRow } from './scale-full';
import type { ScaleRow } from './scale-measure';

const line = (cells: string[]) => `| ${cells.join(' | ')} |`;

function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

/** Seconds with 2 decimals below 10 s, 1 above. */
function sec(ms: number | null): string {
  return ms === null || !Number.isFinite(ms) ? '-' : (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);
}

function triple(l: Latency): string {
  return l.n === 0 ? '- (none due)' : `${fmtMs(l.p50Ms)} / ${fmtMs(l.p99Ms)} / ${fmtMs(l.maxMs)}`;
}

function block(ms: number, ownMs: number): string {
  return Number.isNaN(ownMs) ? fmtMs(ms) : `${fmtMs(ms)} (own ${fmtMs(ownMs)})`;
}

/** What the tables' marks mean, for the lines under them. */
export const SCALE_NOTES = 'Latency: of the checks due in the period, from their result lines (start less due time); ' +
  '"≥": some due checks had not started 60 s after the last phase (the loop was that far behind), so these are the ones that did. ' +
  'Blocks: the longest event-loop block noshell reported in a 100 ms window ending in the period; "-" in "otherwise": the scrapes took all of it. ' +
  '"(own …)": the loop\'s longest block of its own in the same windows: of each tick\'s delay, what is left less the time the loop ' +
  'thread waited for a CPU in it (schedstat at each tick of the report), the longest; absent from a noshell whose report has no such figure. ' +
  'Loop thread: its time on a CPU and runnable but waiting for one over the three scrapes (/proc/PID/task/PID/schedstat): ' +
  'a block is the loop\'s own work, or the thread kept off the CPUs by the checks it runs.';

export function formatScaleTable(rows: readonly ScaleRow[]): string {
  const head = ['checks', 'interval s', 'start s', 'RSS MiB (peak)', 'RSS KiB/check', 'heap MiB', 'heap KiB/check',
    'scrape s median / max', 'scrape MiB', 'longest block in a scrape ms', 'longest block otherwise ms',
    'latency p50 / p99 / max ms', 'results'];
  const body = rows.map((r) => {
    const failed = r.scrapes.filter((s) => s.error !== null);
    const scrapeCell = `${sec(r.scrapeMedianMs)} / ${sec(r.scrapeMaxMs)}${failed.length > 0 ? ` (${failed.length} of ${r.scrapes.length} failed: ${failed[0].error})` : ''}`;
    return line([
      r.checks.toLocaleString('en-US'), fixed(r.intervalMs / 1000, 1), sec(r.startMs), `${fixed(r.rssMiB, 0)} (${fixed(r.peakRssMiB, 0)})`,
      fixed(r.rssPerCheckKiB, 2), fixed(r.heapMiB, 0), fixed(r.heapPerCheckKiB, 2), scrapeCell, fixed(r.scrapeMiB, 1),
      block(r.scrapeBlockMs, r.scrapeOwnBlockMs), fmtMs(r.otherBlockMs), `${r.drained ? '' : '≥ '}${triple(r.latency)}`, String(r.latency.n),
    ]);
  });
  return [line(head), `|${head.map(() => '--:').join('|')}|`, ...body].join('\n');
}

export function formatReloadTable(rows: readonly ScaleRow[]): string {
  const head = ['checks', 'edited', 'added / removed / changed (counted)', 'wall s', 'longest block ms',
    'latency p50 / p99 / max ms of checks due meanwhile', 'due', 'CPU s meanwhile: noshell run / its checks'];
  const body = rows.flatMap((r) => r.reloads.map((x) => {
    const c = x.counted;
    const counts = c === null ? `- (${x.error ?? 'no reload line'})` : `${c.added} / ${c.removed} / ${c.changed}`;
    return line([
      r.checks.toLocaleString('en-US'), `${x.share * 100} %`, counts, x.wallMs === null ? '-' : sec(x.wallMs),
      `${x.blockAtLeast ? '≥ ' : ''}${fmtMs(x.blockMs)}`, `${r.drained ? '' : '≥ '}${triple(x.latency)}`, String(x.latency.n),
      x.cpu === null ? '-' : `${sec(x.cpu.ownMs)} / ${sec(x.cpu.childrenMs)}`,
    ]);
  }));
  return [line(head), `|${head.map(() => '--:').join('|')}|`, ...body].join('\n');
}

/** The run at the fill rate until every check had reported once: memory and scrapes at full size. */
export function formatFullTable(rows: readonly FullRow[]): string {
  const rates = [...new Set(rows.map((r) => r.fillRate))].join(' / ');
  const head = [`checks (all run at ${rates === '' ? 'the fill rate' : `${rates}/s`})`, 'reported after s', 'RSS MiB (peak)', 'heap MiB', 'heap KiB/check',
    'scrapes s', 'scrape MiB', 'longest block in a scrape ms', 'loop thread in the scrapes: on a CPU / waiting for one, s'];
  const body = rows.map((r) => {
    const ok = r.scrapes.filter((s) => s.error === null);
    const failed = r.scrapes.length - ok.length;
    return line([
      r.checks.toLocaleString('en-US'), `${sec(r.fillMs)}${r.filled ? '' : ` (only ${r.results} results)`}`,
      `${fixed(r.rssMiB, 0)} (${fixed(r.peakRssMiB, 0)})`, fixed(r.heapMiB, 0), fixed(r.heapPerCheckKiB, 2),
      `${r.scrapes.map((s) => (s.error === null ? sec(s.ms) : 'failed')).join(' / ')}${failed > 0 ? ` (${r.scrapes.find((s) => s.error !== null)!.error})` : ''}`,
      fixed((ok.at(-1)?.bytes ?? NaN) / 2 ** 20, 1), block(r.scrapeBlockMs, r.scrapeOwnBlockMs),
      Number.isNaN(r.loopCpuMs) ? '-' : `${sec(r.loopCpuMs)} / ${sec(r.loopWaitMs)}`,
    ]);
  });
  return [line(head), `|${head.map(() => '--:').join('|')}|`, ...body].join('\n');
}
