export { spawn } from './process/spawn';
export { Subprocess } from './process/subprocess';
export { exec, execFile } from './process/exec';
export type { ExecOptions, ExecOptionsBuffer, ExecOptionsUtf8, ExecResult } from './process/exec';
export { executorStats } from './process/executor';
export type { ExecutorStats } from './process/executor';
export { popen } from './process/popen';
export type { Popen, PopenReader, PopenWriter, PopenOptions } from './process/popen';
export { parseCommand } from './command/parse-command';
export type { ParsedCommand } from './command/parse-command';
export type { ShellOption } from './command/shell-option';
export { SpawnError, ExecError, ShellSyntaxError } from './process/errors';
export type { SpawnOptions, StdioOption, SpawnMethod, Signal } from './process/options';
export type { ExitStatus, ResourceUsage } from './process/status';
export {
  runCheck, STATE_NAMES, parsePluginOutput, parsePerfdata, parsePerfdataDetailed, parseRange, checkRange, CheckRunner,
} from './check/index';
export type {
  CheckOptions, CheckResult, CheckState, StateName, PluginOutput, PerfDatum, PerfdataParse, ThresholdRange,
  CheckDefinition, CheckRunResult, Clock, KeptDefinition, RunnerOptions, RunnerStats,
} from './check/index';
export type { Duration } from './util/duration';
export { formatPerfdata, formatResult } from './check/format';
export type { CheckStatus } from './check/model/check-status';
export { DEFAULT_PERFDATA_LABEL_MAX_BYTES, DEFAULT_PERFDATA_LIMIT } from './metrics/model/perfdata-limit';
export { registerRunnerMetrics } from './metrics/prom/runner-metrics';
export type { RunnerMetrics, RunnerMetricsOptions } from './metrics/prom/runner-metrics';
export { createRunnerRegistry } from './metrics/prom/runner-registry';
export { createRunnerSource } from './metrics/prom/runner-source';
export { configureRunnerMetrics } from './metrics/scrape/metrics-state';
export type { CheckMetricsOption } from './check/model/definition';
export type { PerfdataOption, PerfdataSeriesOption } from './metrics/model/metrics-options';
export type { MetricsChunksOptions } from './metrics/scrape/runner-text';
export { serveMetrics } from './metrics/serve/metrics-server';
export type { MetricsServer, MetricsSource, ServeMetricsOptions } from './metrics/serve/metrics-server';
export { GearmanWorker } from './gearman/worker/worker';
export type { WorkerJobEvent } from './gearman/worker/worker';
export type { GearmanWorkerOptions } from './gearman/worker/worker-options';
export { workerQueues } from './gearman/worker/worker-options';
export { GearmanClient } from './gearman/client';
export type { ClientOptions, ClientStats, Priority } from './gearman/client';
export { parseServer } from './gearman/protocol/connection';
export type { ServerAddress } from './gearman/protocol/connection';
export { createPayloadCodec, GearmanPayloadError } from './gearman/payload/crypto';
export type { PayloadCodec, CodecOptions } from './gearman/payload/crypto';
export { GearmanProtocolError } from './gearman/protocol/packet';
export { formatJob, formatSubmittedResult, parseJob } from './gearman/payload/job-payload';
export type { CheckJob, JobType } from './gearman/payload/job-payload';
