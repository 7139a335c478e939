// popen-noshell: spawning without /bin/sh and without fork()ing Node (spawn,
// exec, execFile, popen, parseCommand). The checks, metrics and Mod-Gearman
// names are here too, and on their own at popen-noshell/check, /metrics and
// /gearman. Loading this module loads none of prom-client, yaml, valibot or
// tinybench.
export { spawn } from './process/spawn';
export { Subprocess } from './process/subprocess';
export type { LinesOf } from './process/stream-lines';
export { exec, execFile } from './process/exec';
export { execFileSync, execSync } from './process/exec-sync';
export type { ExecSyncOptions, ExecSyncOptionsBuffer, ExecSyncOptionsUtf8 } from './process/exec-sync';
export type { ExecOptions, ExecOptionsBuffer, ExecOptionsUtf8, ExecResult } from './process/exec';
export { executorStats } from './process/executor';
export type { ExecutorStats } from './process/executor';
export { popen } from './process/popen';
export type { Popen, PopenReader, PopenWriter, PopenOptions } from './process/popen';
export { parseCommand } from './command/parse-command';
export type { ParsedCommand } from './command/parse-command';
export type { ShellOption } from './command/shell-option';
export type {
  CommandInput, ListOp, Pipeline, PipelineInput, Redirect, RedirectInput, RedirectOp, Stage, StageInput,
} from './command/command-list';
export { SpawnError, ExecError, ShellSyntaxError } from './process/errors';
export type { SpawnOptions, StdioOption, SpawnMethod, Signal } from './process/options';
export type { Rlimits, RlimitName, RlimitValue, RlimitAmount } from './process/limits';
export type { ExitStatus, ResourceUsage } from './process/status';
export type { ExitMessage, SpawnPath, StartMessage } from './process/diagnostics';
export * from './check/index';
export * from './metrics/index';
export * from './gearman/index';
