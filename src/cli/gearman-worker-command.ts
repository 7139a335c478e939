// noshell gearman-worker: the C mod_gearman_worker's options and worker.conf,
// running checks through noshell.
import { GearmanWorker } from '../gearman/worker/worker';
import { fixMmapThreshold } from '../daemon/malloc-threshold';
import { serveMetrics, type MetricsServer } from '../metrics/serve/metrics-server';
import { metricsListenError } from '../daemon/metrics-listen-error';
import { gearmanWorkerUsage, refuseRoot, workerOptionsFromArgs } from './gearman-worker-args';
import { onWorkerReload } from './gearman-worker-reload';
import { LogFile, logMessage } from '../daemon/log-file';
import { onStopSignals, type StopSignal, type StopSignals } from '../daemon/stop-signals';
import { takeStartSignals } from '../daemon/start-signals';
import { countOf } from '../util/count-text';

export { gearmanWorkerUsage, refuseRoot, workerOptionsFromArgs, workerSpec } from './gearman-worker-args';

/** Running jobs get this long after TERM/INT, then their process groups are killed. */
const DEADLINE = 10_000;

function stamp(): string {
  const d = new Date();
  return d.toISOString().replace('T', ' ').slice(0, 19);
}

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export async function gearmanWorkerCommand(args: string[], out: (s: string) => void, err: (s: string) => void): Promise<number> {
  const start = takeStartSignals();
  let cfg: ReturnType<typeof workerOptionsFromArgs>;
  try {
    cfg = workerOptionsFromArgs(args);
    if (!cfg.help) refuseRoot(cfg.allowRoot);
  } catch (e) {
    start.release();
    throw e;
  }
  if (cfg.help) {
    start.release();
    out(`usage: ${gearmanWorkerUsage}\n`);
    return 0;
  }
  // A daemon's process: a job's packet of up to 16 MiB, freed, leaves its resident memory
  // (src/daemon/malloc-threshold.ts).
  fixMmapThreshold();
  const logFile = new LogFile(cfg.logfile, err);
  let debug = cfg.debug;
  const log = (level: 'error' | 'info' | 'debug', msg: string) => {
    if (level === 'debug' && debug < 1) return;
    logFile.write(`[${stamp()}][${process.pid}][${level.toUpperCase()}] ${logMessage(msg)}\n`);
  };
  for (const w of cfg.warnings) log('info', w);
  const worker = new GearmanWorker({ ...cfg.options, log });

  // Installed before anything runs: a signal that ended Node by default
  // would orphan the running plugins (each leads its own process group).
  // A second TERM/INT is absorbed; SIGHUP reloads (logrotate sends it daily).
  let stop!: StopSignals;
  const stopped = new Promise<StopSignal>((resolve) => {
    stop = onStopSignals((sig) => {
      log('info', `${sig}: stopping, running jobs get ${DEADLINE / 1000} s`);
      resolve(sig);
    }, (sig) => log('info', `${sig}: already stopping; jobs still running are killed ${DEADLINE / 1000} s after the first signal`),
    ['SIGINT', 'SIGTERM']);
  });
  const reload = onWorkerReload(args, {
    worker, logFile, log, stopping: () => stop.caught !== null, prometheus: cfg.prometheus,
    setDebug: (n) => (debug = n),
  });
  // What came before these handlers were in (held since src/cli.ts: start-signals.ts).
  start.release();
  if (start.stop !== null) stop.trigger(start.stop);
  else if (start.hup) reload.now('SIGHUP during the start');

  let metrics: MetricsServer | undefined;
  try {
    if (cfg.prometheus !== undefined) {
      metrics = await serveMetrics({ contentType: CONTENT_TYPE, metrics: async () => worker.metrics() }, cfg.prometheus);
      log('info', `metrics on ${metrics.url}`);
    }
  } catch (e) {
    stop.remove();
    reload.remove();
    logFile.close();
    throw cfg.prometheus !== undefined ? metricsListenError('noshell gearman-worker', cfg.prometheus.host, cfg.prometheus.port, e) : e;
  }
  if (stop.caught === null) worker.start();
  await stopped;
  await worker.stop({ deadlineMs: DEADLINE });
  await metrics?.close();
  const s = worker.stats();
  log('info', `stopped after ${countOf(s.jobsDone, 'job')} (${countOf(s.resultsSubmitted, 'result')} submitted, ${s.resultsDropped} dropped)`);
  stop.remove();
  reload.remove();
  logFile.close();
  return 0;
}
