// The checks file of `noshell run`: JSON with optional defaults.
//   { "concurrency": 32,
//     "defaults": { "timeout": "10s", "timeoutState": 2 },
//     "checks": [ { "id": "load", "command": "check_load -w 5,4,3 -c 10,8,6",
//                   "interval": "60s", "retryInterval": "10s", "maxAttempts": 3 } ] }
import { readFileSync } from 'node:fs';
import type { CheckDefinition, RunnerOptions } from '../check/runner';
import { parseDuration } from './duration';

const DURATIONS = ['interval', 'retryInterval', 'timeout', 'forceKillAfter'] as const;
const SCHEDULE = new Set(['interval', 'retryInterval', 'maxAttempts']);

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
  if (obj.defaults !== undefined && (typeof obj.defaults !== 'object' || obj.defaults === null)) {
    throw new TypeError(`${file}: "defaults" must be an object`);
  }
  const defaults = obj.defaults === undefined ? {} : durations(obj.defaults as Record<string, unknown>, 'defaults');
  // Schedule settings in defaults go to each check; the rest are check options.
  const schedule: Record<string, unknown> = {};
  const runner: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(defaults)) (SCHEDULE.has(k) ? schedule : runner)[k] = v;
  if (obj.concurrency !== undefined) runner.concurrency = obj.concurrency;
  const checks = obj.checks.map((c, i) => {
    if (typeof c !== 'object' || c === null) throw new TypeError(`${file}: checks[${i}] must be an object`);
    return { ...schedule, ...durations(c as Record<string, unknown>, `checks[${i}]`) } as unknown as CheckDefinition;
  });
  return { runner: runner as RunnerOptions, checks };
}
