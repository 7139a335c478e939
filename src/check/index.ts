// popen-noshell/check: one Nagios-style check (runCheck), plugin output and
// its perfdata and ranges, and CheckRunner, the scheduler. The package root
// exports the same names.
export { runCheck, STATE_NAMES } from './run-check';
export type { CheckOptions, CheckResult, CheckState, StateName } from './run-check';
export { formatPerfdata, formatResult } from './format';
export { parsePluginOutput } from './plugin/plugin-output';
export type { PluginOutput } from './plugin/plugin-output';
export { parsePerfdata, parsePerfdataDetailed } from './plugin/perfdata';
export type { PerfDatum, PerfdataParse } from './plugin/perfdata';
export { parseRange, checkRange } from './plugin/range';
export type { ThresholdRange } from './plugin/range';
export type { CheckStatus } from './model/check-status';
export type { CheckMetricsOption } from './model/definition';
export { CheckRunner } from './runner/runner';
export type { CheckDefinition, CheckRunResult, Clock, KeptDefinition, RunnerOptions, RunnerStats } from './runner/runner';
export type { Duration } from '../util/duration';
