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
  /** Runner-wide settings: concurrency. */
  runner: RunnerOptions;
  /** Which series /metrics exposes, and the perfdata caps (the file's top-level "metrics"). */
  metrics: RunnerMetricsOptions;
  checks: FileCheck[];
}
