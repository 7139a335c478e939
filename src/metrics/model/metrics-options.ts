// Which series a runner exposes: large sites turn perfdata series off or
// limit them to some checks and labels, and a check (or the checks file's
// defaults) can leave out its noshell_check_* series altogether. Patterns
// are an exact name or a prefix ending in `*`: compared, never compiled.
import { describe } from '../../util/validate';
import type { CheckFigures } from '../../check/model/check-status';

export interface PerfdataSeriesOption {
  /** Check ids (or `prefix*`) whose perfdata is exported; default all. */
  checks?: readonly string[] | undefined;
  /** Perfdata labels (or `prefix*`) exported; default all. */
  labels?: readonly string[] | undefined;
}

/** true (default): every check's perfdata series; false: none; or only these checks and labels. */
export type PerfdataOption = boolean | PerfdataSeriesOption;

export type NameMatch = (name: string) => boolean;

const all: NameMatch = () => true;

function patterns(list: unknown, what: string): NameMatch {
  if (list === undefined) return all;
  if (!Array.isArray(list) || !list.every((p) => typeof p === 'string' && p !== '')) {
    throw new TypeError(`${what} must be an array of non-empty strings (names, or prefixes ending in *), got ${describe(list)}`);
  }
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const p of list as string[]) {
    if (p.endsWith('*')) prefixes.push(p.slice(0, -1));
    else exact.add(p);
  }
  return (name) => exact.has(name) || prefixes.some((p) => name.startsWith(p));
}

/** What the perfdata option lets through: checks and labels. */
export interface PerfdataExposure {
  checks: NameMatch;
  labels: NameMatch;
  /** Whether the label filter keeps everything (no per-item work). */
  allLabels: boolean;
}

export const EXPOSE_ALL: PerfdataExposure = { checks: all, labels: all, allLabels: true };
const EXPOSE_NONE: PerfdataExposure = { checks: () => false, labels: () => false, allLabels: false };

/** Validates a perfdata option (TypeError on a bad one). */
export function perfdataExposure(option: unknown): PerfdataExposure {
  if (option === undefined || option === true) return EXPOSE_ALL;
  if (option === false) return EXPOSE_NONE;
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    throw new TypeError(`perfdata must be true, false or { checks?, labels? }, got ${describe(option)}`);
  }
  for (const k of Object.keys(option)) {
    if (k !== 'checks' && k !== 'labels') throw new TypeError(`perfdata: unknown field ${JSON.stringify(k)} (checks, labels)`);
  }
  const o = option as PerfdataSeriesOption;
  const labels = patterns(o.labels, 'perfdata.labels');
  return { checks: patterns(o.checks, 'perfdata.checks'), labels, allLabels: labels === all };
}

/** Whether a check exposes series at all, and its perfdata ones. */
export function checkExposure(status: CheckFigures, perfdata: PerfdataExposure): { series: boolean; perfdata: boolean } {
  const m = status.definition.metrics;
  if (m === false) return { series: false, perfdata: false };
  const own = typeof m === 'object' ? m.perfdata !== false : true;
  return { series: true, perfdata: own && perfdata.checks(status.id) };
}
