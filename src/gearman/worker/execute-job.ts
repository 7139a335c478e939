// One job from grab to result: run it, account for it, and hand the C
// worker's result payload to the client (service and host checks only).
import type { PayloadCodec } from '../payload/crypto';
import { escapeOutput, formatResult, jobTime, type CheckJob } from '../payload/job-payload';
import { LogLimit, peerText } from '../protocol/log-limit';
import { runJob, type JobOutcome, type JobPlans } from './run-job';
import type { JobResultLabel, WorkerMetrics } from './worker-metrics';
import type { ResolvedWorkerOptions } from './worker-options';

export interface WorkerJobEvent {
  queue: string;
  handle: string;
  job: CheckJob;
  outcome: JobOutcome;
  /** The result payload sent (cleartext), or null for jobs that send none. */
  result: string | null;
}

export interface ExecuteContext {
  options: ResolvedWorkerOptions;
  /** Where results go (the worker's ResultClients). */
  client: { submit(queue: string, data: string): void };
  codec: PayloadCodec;
  metrics: WorkerMetrics;
  log: (level: 'error' | 'info' | 'debug', message: string) => void;
  /** The jobs' checked exec options, kept from job to job. */
  plans?: JobPlans;
}

const MAX_OUTPUT = 10 * 1024 * 1024; // the C worker's output cap
/** Failed event handlers and notifications logged per minute (per process). */
const failedHandlers = new LogLimit();
const RESULT_LABELS: JobResultLabel[] = ['ok', 'warning', 'critical', 'unknown'];

/** The result of a job the worker itself failed on: return code 3 with the reason. */
export function internalErrorOutcome(identifier: string, message: string): JobOutcome {
  const now = Date.now() / 1000;
  return {
    returnCode: 3, output: escapeOutput(`(Error On Worker ${identifier}: ${message})`), startTime: now, finishTime: now,
    timedOut: false, aborted: false, viaShell: false, rusage: { userCpuMs: 0, systemCpuMs: 0, maxRssKb: 0 }, spawnError: null,
  };
}

export async function executeJob(
  ctx: ExecuteContext, queue: string, handle: string, job: CheckJob, signal: AbortSignal, grabbed: number,
): Promise<WorkerJobEvent> {
  const o = ctx.options;
  let outcome: JobOutcome;
  try {
    outcome = await runJob(job, {
      identifier: o.identifier, defaultTimeout: o.jobTimeout, timeoutReturn: o.timeoutReturn,
      showErrorOutput: o.showErrorOutput, maxOutput: MAX_OUTPUT, signal, plans: ctx.plans,
    });
  } catch (err) {
    // Whatever went wrong in here, the core still gets a result for its
    // check: UNKNOWN, like the C worker's "(Error On Fork)".
    const message = err instanceof Error ? err.message : String(err);
    ctx.log('error', `job ${handle} (${queue}): internal error: ${message}`);
    outcome = internalErrorOutcome(o.identifier, message);
  }
  if (outcome.aborted) {
    // What the C worker sends for a job its worker was stopped in.
    outcome.returnCode = 2;
    outcome.output = `(Return code of 15 is out of bounds. Worker exited by signal SIGTERM on worker: ${o.identifier})`;
  }
  const m = ctx.metrics;
  m.checkCpuSeconds += (outcome.rusage.userCpuMs + outcome.rusage.systemCpuMs) / 1000;
  if (outcome.viaShell) m.viaShell++;
  if (outcome.timedOut) m.timeouts++;
  let result: string | null = null;
  if ((job.type === 'service' || job.type === 'host') && job.resultQueue !== undefined) {
    result = formatResult({
      hostName: job.hostName ?? '', serviceDescription: job.serviceDescription, coreStartTime: jobTime(job.coreTime),
      startTime: outcome.startTime, finishTime: outcome.finishTime, returnCode: outcome.returnCode,
      // The C worker's format string has a UTF-8 no-break space after '@'.
      source: `Mod-Gearman Worker @\u00a0${o.identifier}`, output: outcome.output,
    });
    ctx.client.submit(job.resultQueue, ctx.codec.encode(result));
    m.countJob(queue, outcome.timedOut ? 'timeout' : RESULT_LABELS[outcome.returnCode] ?? 'unknown');
  } else {
    m.countJob(queue, 'no_result');
    if ((job.type === 'eventhandler' || job.type === 'notification') && outcome.returnCode !== 0) {
      // As the C worker logs it, but bounded: whoever can submit jobs could fill the disk with these.
      const note = failedHandlers.pass();
      if (note !== null) {
        ctx.log('error', `${job.serviceDescription !== undefined ? 'service' : 'host'} ${job.type} exited with return code ` +
          `${outcome.returnCode}; cmd: ${peerText(job.commandLine ?? '', 500)}; output: ${peerText(outcome.output, 500)}${note}`);
      }
    }
  }
  m.observeLatency((performance.now() - grabbed) / 1000);
  ctx.log('debug', `job ${handle} (${queue}) ${job.hostName ?? ''}${job.serviceDescription ? ` - ${job.serviceDescription}` : ''}: rc=${outcome.returnCode}`);
  return { queue, handle, job, outcome, result };
}
