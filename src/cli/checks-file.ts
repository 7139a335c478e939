// The checks file of `noshell run`: JSON, or YAML by extension (.yaml/.yml).
//   { "concurrency": 32,
//     "macros": { "USER1": "/usr/lib/nagios/plugins" },
//     "defaults": { "timeout": "10s", "timeoutState": "CRITICAL", "interval": "60s", "user": "nagios" },
//     "checks": [ { "id": "load", "command": "$USER1$/check_load -w $ARG1$ -c $ARG2$",
//                   "args": ["5,4,3", "10,8,6"], "retryInterval": "10s", "maxAttempts": 3 } ] }
// Loading validates against the schema (checks-schema.ts), merges defaults
// into each check and expands macros, so every definition is complete on its
// own: a reload compares definitions, and a changed default is a changed
// check. User and group names are resolved separately (checks-identity.ts),
// since that asks the system's user database.
import type { RunnerMetricsOptions } from '../check/metrics-state';
import type { CheckDefinition, RunnerOptions } from '../check/runner';
import { quoteName } from '../quote-text';
import { readChecksData } from './checks-file-text';
import { validateChecksFile, type CheckData } from './checks-schema';
import { expandMacros, MacroError } from './macros';

export interface FileCheck {
  /** Complete: defaults merged, macros expanded, durations in ms; no credentials yet. */
  definition: CheckDefinition;
  user?: string;
  group?: string;
}

export interface ChecksFile {
  /** Runner-wide settings: concurrency. */
  runner: RunnerOptions;
  /** Which series /metrics exposes, and the perfdata caps (the file's top-level "metrics"). */
  metrics: RunnerMetricsOptions;
  checks: FileCheck[];
}

function checkName(c: CheckData, i: number): string {
  return `checks[${i}] (id ${quoteName(c.id)})`;
}

/** Fields of a check that are not options of its definition. */
const NOT_OPTIONS: ReadonlySet<string> = new Set(['id', 'command', 'args', 'user', 'group']);

/**
 * `{ id, command, ...defaults and the check's own options }`, keys in the
 * order of `{ ...defaults, ...c }`. Assigned key by key: object rest and
 * spread of the merged check took ~4 µs a check (400 ms of a 100,000-check
 * reload), this ~0.5. Both objects come out of the schema, which keeps only
 * its own fields (never `__proto__`).
 */
function withDefaults(defaults: Record<string, unknown>, c: CheckData, command: string | string[]): CheckDefinition {
  const definition: Record<string, unknown> = { id: c.id, command };
  for (const k of Object.keys(defaults)) if (!NOT_OPTIONS.has(k)) definition[k] = defaults[k];
  for (const k of Object.keys(c)) if (!NOT_OPTIONS.has(k)) definition[k] = (c as Record<string, unknown>)[k];
  return definition as unknown as CheckDefinition;
}

/** Reads, validates and expands a checks file; a TypeError naming the file, check and field on any problem. */
export function loadChecksFile(file: string): ChecksFile {
  const data = validateChecksFile(readChecksData(file), file);
  const macros = new Map(Object.entries(data.macros ?? {}));
  const defaults = data.defaults ?? {};
  const problems: string[] = [];
  const seen = new Map<string, number>();
  const checks: FileCheck[] = [];
  data.checks.forEach((c, i) => {
    const first = seen.get(c.id);
    if (first !== undefined) problems.push(`${checkName(c, i)}: field "id": the same id as checks[${first}]`);
    else seen.set(c.id, i);
    const { command, args = [] } = c;
    let expanded: string | string[];
    try {
      expanded = typeof command === 'string'
        ? expandMacros(command, macros, args)
        : command.map((word) => expandMacros(word, macros, args));
    } catch (err) {
      if (!(err instanceof MacroError)) throw err;
      problems.push(`${checkName(c, i)}: field "command": ${err.message}`);
      return;
    }
    const definition = withDefaults(defaults, c, expanded);
    if (definition.interval === undefined) {
      problems.push(`${checkName(c, i)}: field "interval" is missing (give it here or in "defaults")`);
      return;
    }
    const fileCheck: FileCheck = { definition };
    const user = Object.hasOwn(c, 'user') ? c.user : defaults.user;
    const group = Object.hasOwn(c, 'group') ? c.group : defaults.group;
    if (user !== undefined) fileCheck.user = user;
    if (group !== undefined) fileCheck.group = group;
    checks.push(fileCheck);
  });
  if (problems.length > 0) throw new TypeError(`${file}: invalid checks file:\n  ${problems.join('\n  ')}`);
  return { runner: data.concurrency !== undefined ? { concurrency: data.concurrency } : {}, metrics: data.metrics ?? {}, checks };
}
