export { spawn } from './spawn';
export { Subprocess } from './subprocess';
export { exec, execFile } from './exec';
export type { ExecOptions, ExecResult } from './exec';
export { popen } from './popen';
export type { Popen, PopenReader, PopenWriter, PopenOptions } from './popen';
export { parseCommand } from './parse-command';
export type { ParsedCommand } from './parse-command';
export type { ShellOption } from './command';
export { SpawnError, ExecError, ShellSyntaxError } from './errors';
export type { SpawnOptions, StdioOption, SpawnMethod, Signal } from './options';
export type { ExitStatus, ResourceUsage } from './status';
export {
  runCheck, STATE_NAMES, parsePluginOutput, parsePerfdata, parsePerfdataDetailed, parseRange, checkRange, CheckRunner,
} from './check/index';
export type {
  CheckOptions, CheckResult, CheckState, StateName, PluginOutput, PerfDatum, PerfdataParse, ThresholdRange,
  CheckDefinition, CheckRunResult, Clock, RunnerOptions, RunnerStats,
} from './check/index';
export { formatPerfdata, formatResult } from './check/format';
