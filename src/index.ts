export { spawn } from './spawn';
export { Subprocess } from './subprocess';
export { exec, execFile } from './exec';
export type { ExecOptions, ExecResult } from './exec';
export { SpawnError, ExecError, ShellSyntaxError } from './errors';
export type { SpawnOptions, StdioOption, SpawnMethod, Signal } from './options';
export type { ExitStatus, ResourceUsage } from './status';
