// Plugin output: first line `TEXT | perfdata`; further lines are long output;
// from the first later line containing '|', the rest is perfdata too.
import { checkString } from '../../util/validate';
import { parsePerfdataDetailed, type PerfDatum } from './perfdata';

export interface PluginOutput {
  /** The first line's text, trimmed. */
  output: string;
  /** Lines after the first, up to the perfdata, joined with '\n'. */
  longOutput: string;
  perfdata: PerfDatum[];
  /** Perfdata items skipped or fields ignored, and why. */
  perfdataErrors: string[];
}

/**
 * What a result without perfdata errors holds: one frozen empty array, not a
 * new one per result kept until the check's next (issue 19). A result's
 * perfdata array stays its own: adding items to it (a duration, say) before
 * passing a result on is a reasonable thing to do; to its errors, not.
 */
export const NO_ERRORS: string[] = Object.freeze([]) as unknown as string[];

export function parsePluginOutput(text: string): PluginOutput {
  if (typeof text !== 'string') checkString(text, 'parsePluginOutput: text');
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const first = stripCr(lines[0] ?? '');
  const bar = first.indexOf('|');
  const output = (bar < 0 ? first : first.slice(0, bar)).trim();
  const perfParts: string[] = bar < 0 ? [] : [first.slice(bar + 1)];
  const long: string[] = [];
  let inPerf = false;
  for (let i = 1; i < lines.length; i++) {
    const line = stripCr(lines[i]);
    if (inPerf) {
      perfParts.push(line);
      continue;
    }
    const b = line.indexOf('|');
    if (b < 0) {
      long.push(line);
    } else {
      if (b > 0) long.push(line.slice(0, b));
      perfParts.push(line.slice(b + 1));
      inPerf = true;
    }
  }
  const parsed = { perfdata: [] as PerfDatum[], errors: [] as string[] };
  for (const part of perfParts) parsePerfdataDetailed(part, parsed);
  return {
    output, longOutput: long.join('\n'),
    perfdata: parsed.perfdata,
    perfdataErrors: parsed.errors.length === 0 ? NO_ERRORS : parsed.errors,
  };
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}
