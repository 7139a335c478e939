// Which per-check family is which in the addon's line writer
// (native/metrics/scrape-lines.h, enum ns_family): a scrape writes each per-check
// family's lines there, from the columns check-view.ts reads each check's
// status into. The text must come out byte for byte as renderFamilies gives
// it (test/metrics/metrics-render.test.ts renders both over random histories).
import type { MetricFamily } from '../model/metrics-snapshot';

/** The per-check families, in the order of ns_family. */
const NAMES = [
  'noshell_check_interval_seconds',
  'noshell_check_running',
  'noshell_check_state',
  'noshell_check_state_type',
  'noshell_check_attempt',
  'noshell_check_max_attempts',
  'noshell_check_last_run_timestamp_seconds',
  'noshell_check_last_state_change_timestamp_seconds',
  'noshell_check_last_execution_seconds',
  'noshell_check_last_latency_seconds',
  'noshell_check_perfdata',
  'noshell_check_perfdata_warn',
  'noshell_check_perfdata_crit',
  'noshell_check_perfdata_min',
  'noshell_check_perfdata_max',
  'noshell_check_perfdata_label_sets',
  'noshell_check_perfdata_dropped_total',
] as const;

const CODES = new Map<string, number>(NAMES.map((n, i) => [n, i]));

/** A per-check family as the addon's writer takes it: its ns_family code and its name's bytes. */
export interface LineFamily {
  readonly code: number;
  readonly name: Buffer;
}

/** Names of `families` the addon has no writer for. */
export function genericFamilies(families: readonly MetricFamily[]): string[] {
  return families.filter((f) => !CODES.has(f.name)).map((f) => f.name);
}

/** The writer's view of a per-check family; a TypeError for one it has none for (a family added without its writer). */
export function lineFamily(f: MetricFamily): LineFamily {
  const code = CODES.get(f.name);
  if (code === undefined) throw new TypeError(`no line writer for the per-check family ${f.name}`);
  return { code, name: Buffer.from(f.name, 'latin1') };
}
