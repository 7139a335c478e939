// Plugin-style text for a result: what `noshell check` prints.
import type { PerfDatum } from './perfdata';
import type { ThresholdRange } from './range';
import type { CheckResult } from './run-check';

function range(r: ThresholdRange | undefined): string {
  if (r === undefined) return '';
  const start = r.start === -Infinity ? '~' : String(r.start);
  const end = r.end === Infinity ? '' : String(r.end);
  const body = r.start === 0 && r.end !== Infinity ? end : `${start}:${end}`;
  return `${r.alertInside ? '@' : ''}${body}`;
}

/** Perfdata back in the plugin format (labels quoted when needed). */
export function formatPerfdata(perfdata: readonly PerfDatum[]): string {
  return perfdata
    .map((p) => {
      const label = /[\s'=]/.test(p.label) ? `'${p.label.replace(/'/g, "''")}'` : p.label;
      const fields = [
        `${p.value === null ? 'U' : p.value}${p.uom}`, range(p.warn), range(p.crit),
        p.min === undefined ? '' : String(p.min), p.max === undefined ? '' : String(p.max),
      ];
      while (fields.length > 1 && fields[fields.length - 1] === '') fields.pop();
      return `${label}=${fields.join(';')}`;
    })
    .join(' ');
}

/** `OUTPUT | perfdata` plus long output lines, as a plugin would print it. */
export function formatResult(r: CheckResult): string {
  const perf = r.perfdata.length > 0 ? ` | ${formatPerfdata(r.perfdata)}` : '';
  // Our own words (timeouts, spawn errors, odd exits) get the state in front.
  const own = r.timedOut || r.spawnError !== null || r.signal !== null || r.exitCode === null || r.exitCode > 3;
  const line = `${own ? `${r.stateName} - ` : ''}${r.output}${perf}`;
  return r.longOutput !== '' ? `${line}\n${r.longOutput}` : line;
}
