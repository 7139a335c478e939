// Plugin-style text for a result: what `noshell check` prints.
import { scanNumber } from './plugin/number';
import type { PerfDatum } from './plugin/perfdata';
import type { ThresholdRange } from './plugin/range';
import type { CheckResult } from './run-check';

// Perfdata is printed so that parsePerfdata reads back the same data
// (test/robustness/fuzz.test.ts checks it): String(-0) is "0" and String(Infinity) is
// not a number the parser accepts, so those get forms it does accept.
function number(v: number): string {
  if (v === Infinity) return '1e999';
  if (v === -Infinity) return '-1e999';
  return Object.is(v, -0) ? '-0' : String(v);
}

/**
 * The value followed by its unit. A unit the parser found after a number can
 * start with what would continue a shorter spelling of it (`1,,5` is 1 with
 * unit `,5`; `1e5e5` is 1e5 with unit `e5`): then the exponent form, which
 * ends the number for certain, keeps the unit apart.
 */
function valueWithUnit(v: number, uom: string): string {
  const plain = number(v);
  if (uom === '' || scanNumber(plain + uom, 0) === plain.length) return plain + uom;
  const exp = Object.is(v, -0) ? '-0e0' : Number.isFinite(v) ? v.toExponential() : plain;
  return exp + uom;
}

function range(r: ThresholdRange | undefined): string {
  if (r === undefined) return '';
  const start = r.start === -Infinity ? '~' : number(r.start);
  const end = r.end === Infinity ? '' : number(r.end);
  const body = Object.is(r.start, 0) && r.end !== Infinity ? end : `${start}:${end}`;
  return `${r.alertInside ? '@' : ''}${body}`;
}

/** Perfdata back in the plugin format (labels quoted when needed). */
export function formatPerfdata(perfdata: readonly PerfDatum[]): string {
  return perfdata
    .map((p) => {
      const label = /[\s'=]/.test(p.label) ? `'${p.label.replace(/'/g, "''")}'` : p.label;
      const fields = [
        p.value === null ? `U${p.uom}` : valueWithUnit(p.value, p.uom), range(p.warn), range(p.crit),
        p.min === undefined ? '' : number(p.min), p.max === undefined ? '' : number(p.max),
      ];
      while (fields.length > 1 && fields[fields.length - 1] === '') fields.pop();
      return `${label}=${fields.join(';')}`;
    })
    .join(' ');
}

/**
 * The result as plugin text (without a final newline). A plugin that exited
 * 0-3 with output: its stdout exactly as it wrote it, as Nagios passes it on
 * (perfdata the parser skipped and numbers as spelled stay). Otherwise noshell's
 * own words (timeouts, spawn errors, signals, odd exits, no output) with the
 * state in front and the parsed perfdata re-printed.
 */
export function formatResult(r: Omit<CheckResult, 'stdout'> & { stdout?: string | undefined }): string {
  const own = r.timedOut || r.spawnError !== null || r.signal !== null || r.exitCode === null || r.exitCode > 3;
  const plugin = r.stdout ?? '';
  if (!own && plugin.trim() !== '') return plugin.endsWith('\n') ? plugin.slice(0, -1) : plugin;
  const perf = r.perfdata.length > 0 ? ` | ${formatPerfdata(r.perfdata)}` : '';
  const line = `${own ? `${r.stateName} - ` : ''}${r.output}${perf}`;
  return r.longOutput !== '' ? `${line}\n${r.longOutput}` : line;
}
