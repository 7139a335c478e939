// What a loaded checks file is (checks-file.ts loads one): the runner's
// settings, the metrics options, and each check as a complete definition
// with the user and group it runs as, before they are resolved to ids.
import type { RunnerMetricsOptions } from '../metrics/scrape/metrics-state';
import type { CheckDefinition, RunnerOptions } from '../check/runner/runner';

export interface FileCheck {
  /** Complete: defaults merged, macros expanded, durations in ms; no credentials yet. */
  definition: CheckDefinition;
  user?: string;
  group?: string;
}

export interface ChecksFile {
  /** Runner-wide settings: concurrency, tick (ms). */
  runner: RunnerOptions;
  /** Which series /metrics exposes, and the perfdata caps (the file's top-level "metrics"). */
  metrics: RunnerMetricsOptions;
  checks: FileCheck[];
}

/**
 * `noshell run`'s tick when neither the file nor --tick gives one (ms): the
 * checks due within 50 ms start together. At 900 checks a second it took the
 * runner's CPU per check from 0.22 to 0.13 ms; longer ticks saved little
 * more (0.124 at 250 ms) and add latency. Nagios 4 schedules in whole seconds.
 */
export const DEFAULT_RUN_TICK_MS = 50;
