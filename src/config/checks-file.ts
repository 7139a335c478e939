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
// since that asks the system's user database. Each check is made into its
// definition by checks-file-check.ts; checks-file-load.ts loads a file with
// what the last load learned.
import type { ChecksFile } from './checks-file-shape';
import { loadChecks } from './checks-file-load';

/** Reads, validates and expands a checks file; a TypeError naming the file, check and field on any problem. */
export function loadChecksFile(file: string): ChecksFile {
  const loaded = loadChecks(file, null);
  return { runner: loaded.runner, metrics: loaded.metrics, checks: Array.from(loaded.digest.ids, (_, i) => loaded.check(i)) };
}
