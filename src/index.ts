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
export type { CheckStatus } from './check/check-status';
export { DEFAULT_PERFDATA_LIMIT } from './check/perfdata-limit';
export { registerRunnerMetrics } from './metrics/runner-metrics';
export type { RunnerMetrics, RunnerMetricsOptions } from './metrics/runner-metrics';
export { createRunnerRegistry } from './metrics/runner-registry';
export { serveMetrics } from './metrics/metrics-server';
export type { MetricsServer } from './metrics/metrics-server';
export { GearmanWorker } from './gearman/worker';
export type { WorkerJobEvent } from './gearman/worker';
export type { GearmanWorkerOptions } from './gearman/worker-options';
export { workerQueues } from './gearman/worker-options';
export { GearmanClient } from './gearman/client';
export type { ClientOptions, ClientStats, Priority } from './gearman/client';
export { parseServer } from './gearman/connection';
export type { ServerAddress } from './gearman/connection';
export { createPayloadCodec, GearmanPayloadError } from './gearman/crypto';
export type { PayloadCodec, CodecOptions } from './gearman/crypto';
export { GearmanProtocolError } from './gearman/packet';
export { formatJob, formatSubmittedResult, parseJob } from './gearman/job-payload';
export type { CheckJob, JobType } from './gearman/job-payload';
