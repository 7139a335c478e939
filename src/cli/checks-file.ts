// The checks file of `noshell run`: JSON with optional defaults.
//   { "concurrency": 32,
//     "defaults": { "timeout": "10s", "timeoutState": 2 },
//     "checks": [ { "id": "load", "command": "check_load -w 5,4,3 -c 10,8,6",
//                   "interval": "60s", "retryInterval": "10s", "maxAttempts": 3 } ] }
import { readFileSync } from 'node:fs';
import type { CheckDefinition, RunnerOptions } from '../check/runner';
import { parseDuration } from './duration';

const DURATIONS = ['interval', 'retryInterval', 'timeout', 'forceKillAfter'] as const;

export interface ChecksFile {
  runner: RunnerOptions;
  checks: CheckDefinition[];
}

function durations<T extends Record<string, unknown>>(obj: T, where: string): T {
  const out: Record<string, unknown> = { ...obj };
  for (const key of DURATIONS) if (key in out) out[key] = parseDuration(out[key], `${where}.${key}`);
  return out as T;
}

export function loadChecksFile(file: string): ChecksFile {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new TypeError(`${file}: ${(err as Error).message}`);
  }
  const obj = data as { concurrency?: unknown; defaults?: unknown; checks?: unknown };
  if (typeof obj !== 'object' || obj === null || !Array.isArray(obj.checks)) {
    throw new TypeError(`${file}: expected an object with a "checks" array`);
  }
  const defaults = obj.defaults === undefined ? {} : durations(obj.defaults as Record<string, unknown>, 'defaults');
  const runner: RunnerOptions = { ...defaults };
  if (obj.concurrency !== undefined) runner.concurrency = obj.concurrency as number;
  const checks = obj.checks.map((c, i) => {
    if (typeof c !== 'object' || c === null) throw new TypeError(`${file}: checks[${i}] must be an object`);
    return durations(c as Record<string, unknown>, `checks[${i}]`) as unknown as CheckDefinition;
  });
  return { runner, checks };
}
