// The checks files of `noshell bench --scale`: N checks of check_dummy with
// five perfdata values each, one interval for all chosen so that N checks
// offer `rate` checks/s whatever N is, and the edits a reload applies: a
// share of the checks changed in place, removed, or added under new ids.
import { renameSync, writeFileSync } from 'node:fs';

export const CHECK_DUMMY = '/usr/lib/nagios/plugins/check_dummy';
const PERFDATA = 'a=1;2;3 b=2s c=3% d=4B e=5';

export interface ScaleCheck {
  id: string;
  /** Bumped by each change: part of the plugin's output, so the definition differs. */
  version: number;
}

export interface ScaleEdit {
  added: number;
  removed: number;
  changed: number;
}

export function initialChecks(n: number): ScaleCheck[] {
  const width = String(n).length;
  return Array.from({ length: n }, (_, i) => ({ id: `c${String(i).padStart(width, '0')}`, version: 0 }));
}

/** ms between runs of a check: N of them every interval offer `rate` checks/s. */
export function intervalFor(n: number, rate: number): number {
  return Math.max(1, Math.round((n / rate) * 1000));
}

/**
 * Edits `share` (0.01: 1 %) of the checks, spread over the list: a tenth of
 * them removed, as many added under new ids (`tag` keeps them apart from an
 * earlier edit's), the rest changed in place. Returns the new list and what
 * the reload should count.
 */
export function editChecks(checks: readonly ScaleCheck[], share: number, tag: string): { checks: ScaleCheck[]; edit: ScaleEdit } {
  const touched = Math.max(1, Math.round(checks.length * share));
  const removed = Math.floor(touched / 10);
  const added = removed;
  const changed = touched - removed - added;
  const picks = changed + removed;
  const stride = checks.length / picks;
  const picked = new Map<number, 'change' | 'remove'>();
  // Evenly spread, and exactly `removed` of the picks removed (spread too).
  for (let k = 0; k < picks; k++) {
    const remove = Math.floor(((k + 1) * removed) / picks) > Math.floor((k * removed) / picks);
    picked.set(Math.floor(k * stride), remove ? 'remove' : 'change');
  }
  const next: ScaleCheck[] = [];
  checks.forEach((c, i) => {
    const what = picked.get(i);
    if (what === undefined) next.push(c);
    else if (what === 'change') next.push({ id: c.id, version: c.version + 1 });
  });
  for (let k = 0; k < added; k++) next.push({ id: `${tag}-${k}`, version: 0 });
  return { checks: next, edit: { added, removed, changed } };
}

/** Writes the checks file whole, then renames it into place: a reload never reads half of it. */
export function writeChecksFile(file: string, checks: readonly ScaleCheck[], intervalMs: number): void {
  const lines = checks.map((c) => JSON.stringify({ id: c.id, command: [CHECK_DUMMY, '0', `OK v${c.version} | ${PERFDATA}`] }));
  const text = `{"defaults": {"interval": ${intervalMs}, "timeout": "10s"},\n"checks": [\n${lines.join(',\n')}\n]}\n`;
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}
