// SIGHUP for `noshell gearman-worker`, as the C worker takes it: read the
// command line's config files again and apply them to the running worker.
// Mod-Gearman's logrotate ends with `systemctl condreload`, whose
// ExecReload sends SIGHUP, so this happens daily: the log file is reopened,
// running jobs go on, and a config that no longer loads is logged and the
// worker keeps the one it has.
import type { GearmanWorker } from '../gearman/worker/worker';
import { refuseRoot, workerOptionsFromArgs } from './gearman-worker-args';
import type { LogFile } from '../daemon/log-file';

export interface WorkerReloadTarget {
  worker: GearmanWorker;
  logFile: LogFile;
  log: (level: 'error' | 'info' | 'debug', message: string) => void;
  setDebug: (level: number) => void;
  stopping: () => boolean;
  /** The metrics address in force; a new one takes a restart. */
  prometheus: { host: string; port: number } | undefined;
}

function sameAddress(a: WorkerReloadTarget['prometheus'], b: WorkerReloadTarget['prometheus']): boolean {
  return a?.host === b?.host && a?.port === b?.port;
}

/** One reload, synchronous: new options are validated whole before anything changes. */
export function reloadWorker(args: readonly string[], t: WorkerReloadTarget): boolean {
  // The log file first: a rotated log must be let go even if the config is broken.
  try {
    t.logFile.reopen();
  } catch (e) {
    t.log('error', `SIGHUP: ${(e as Error).message}; logging on to the file as it was`);
  }
  try {
    const next = workerOptionsFromArgs(args, true);
    refuseRoot(next.allowRoot);
    if (next.logfile !== t.logFile.file) t.logFile.reopen(next.logfile);
    t.setDebug(next.debug);
    for (const w of next.warnings) t.log('info', w);
    t.worker.reconfigure({ ...next.options, log: t.log });
    if (!sameAddress(next.prometheus, t.prometheus)) t.log('error', 'SIGHUP: a new prometheus_server takes a restart; serving metrics where they were');
    return true;
  } catch (e) {
    t.log('error', `SIGHUP: reload failed, running on with the configuration in force: ${(e as Error).message}`);
    return false;
  }
}

/** `now(why)`: a reload as SIGHUP makes one (`why` names what asked for it in the log). */
export function onWorkerReload(args: readonly string[], t: WorkerReloadTarget): { remove(): void; now(why: string): void } {
  const now = (why: string) => {
    if (t.stopping()) {
      t.log('info', `${why} while stopping: ignored`);
      return;
    }
    t.log('info', `${why}: reloading the configuration, reopening the log file`);
    reloadWorker(args, t);
  };
  const handler = () => now('SIGHUP');
  process.on('SIGHUP', handler);
  return { remove: () => process.off('SIGHUP', handler), now };
}
