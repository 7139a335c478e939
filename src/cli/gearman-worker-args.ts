// The command line and worker.conf of `noshell gearman-worker`, named as
// the C mod_gearman_worker names them, turned into GearmanWorker options.
import { statSync } from 'node:fs';
import { definedFields } from '../util/defined-fields';
import { actingUid } from '../util/privilege';
import type { GearmanWorkerOptions } from '../gearman/worker/worker-options';
import { last, list, number, parseToolArgs, yesNo, type OptionSpec, type ParsedOptions } from './gearman-args';

export const gearmanWorkerUsage = 'noshell gearman-worker [--config=FILE] --server=HOST[:PORT] [--key=K|--keyfile=F|--encryption=no] ' +
  '[--identifier=ID] [--hosts] [--services] [--eventhandler] [--notifications] [--hostgroups=G,..] [--servicegroups=G,..] ' +
  '[--max-worker=N] [--job_timeout=S] [--timeout_return=N] [--show_error_output=yes|no] [--load_limit1/5/15=L] ' +
  '[--debug=N] [--logfile=FILE] [--prometheus_server=[HOST:]PORT] [--allow-root]\n' +
  '  SIGHUP re-reads the options and config files (servers, queues, max-worker, timeouts, key) and reopens the log file';

export const workerSpec: OptionSpec = {
  kinds: {
    server: 'list', key: 'value', keyfile: 'value', encryption: 'bool', identifier: 'value',
    hosts: 'bool', services: 'bool', eventhandler: 'bool', notifications: 'bool', hostgroups: 'list', servicegroups: 'list',
    'max-worker': 'value', 'min-worker': 'value', job_timeout: 'value', timeout_return: 'value', show_error_output: 'bool',
    load_limit1: 'value', load_limit5: 'value', load_limit15: 'value', debug: 'value', logfile: 'value', prometheus_server: 'value',
    allow_root: 'bool', help: 'bool',
  },
  aliases: {
    password: 'key', passwordfile: 'keyfile', eventhandlers: 'eventhandler', notification: 'notifications',
    hostgroup: 'hostgroups', servicegroup: 'servicegroups', h: 'help', 'allow-root': 'allow_root',
  },
  ignored: new Set(['daemon', 'd', 'pidfile', 'logmode', 'idle-timeout', 'max-jobs', 'spawn-rate', 'fork_on_exec',
    'use_uniq_jobs', 'gearman_connection_timeout', 'log_stats_interval', 'enable_embedded_perl', 'use_embedded_perl_implicitly',
    'use_perl_cache', 'p1_file', 'sink-rate', 'backgrounding-threshold', 'load_cpu_multi', 'mem_limit', 'internal_check_dummy']),
  unsupported: new Set(['dupserver', 'max-age', 'debug-result', 'debug_result', 'workaround_rc_25', 'restrict_path', 'restrictpath',
    'localhostgroups', 'localhostgroup', 'localservicegroups', 'localservicegroup', 'queue_custom_variable', 'export', 'perfdata',
    'perfdata_mode', 'perfdata_send_all', 'route_eventhandler_like_checks', 'result_queue', 'do_hostchecks', 'orphan_host_checks',
    'orphan_service_checks', 'orphan_return', 'accept_clear_results', 'latency_flatten_window', 'result_workers',
    'dup_results_are_passive', 'host_perfdata_template', 'service_perfdata_template', 'active']),
};

const TOOL = 'noshell gearman-worker';

function bool(p: ParsedOptions, key: string): boolean | undefined {
  const v = last(p, key);
  return v === undefined ? undefined : yesNo(v, true);
}

/** worker.conf / command line → GearmanWorker options (and the CLI's own: logfile, debug, metrics). */
function isFifo(file: string): boolean {
  try {
    return statSync(file).isFIFO();
  } catch {
    // Not there or not ours to look at: the key's own read says why.
    return false;
  }
}

/** `reload`: read again for a SIGHUP, where a config file that is a pipe is refused (small-file.ts). */
export function workerOptionsFromArgs(args: readonly string[], reload = false): {
  options: GearmanWorkerOptions; logfile: string | undefined; debug: number; prometheus: { host: string; port: number } | undefined;
  warnings: string[]; help: boolean; allowRoot: boolean;
} {
  const p = parseToolArgs(args, workerSpec, TOOL, reload);
  const help = bool(p, 'help') === true;
  const servers = list(p, 'server');
  if (servers.length === 0 && !help) throw new TypeError(`${TOOL}: no server given (--server=HOST[:PORT])`);
  const encryption = bool(p, 'encryption') ?? true;
  const key = last(p, 'key');
  const keyfile = last(p, 'keyfile');
  // A key file that is a pipe is read at start only: a reload that would read it again is refused whole.
  if (reload && keyfile !== undefined && isFifo(keyfile)) {
    throw new TypeError(`keyfile ${keyfile} is a FIFO: read at start only, not on a reload`);
  }
  if (encryption && key === undefined && keyfile === undefined && !help) {
    throw new TypeError(`${TOOL}: encryption is on but no key is set (--key=..., --keyfile=... or --encryption=no)`);
  }
  const options: GearmanWorkerOptions = definedFields({
    servers, encryption, key, keyfile, identifier: last(p, 'identifier'),
    hosts: bool(p, 'hosts'), services: bool(p, 'services'), eventhandlers: bool(p, 'eventhandler'),
    notifications: bool(p, 'notifications'), hostgroups: list(p, 'hostgroups'), servicegroups: list(p, 'servicegroups'),
    maxWorker: number(p, 'max-worker', TOOL, 1), minWorker: number(p, 'min-worker', TOOL, 0),
    jobTimeout: number(p, 'job_timeout', TOOL, 1), timeoutReturn: number(p, 'timeout_return', TOOL, 0),
    showErrorOutput: bool(p, 'show_error_output'),
    loadLimit1: number(p, 'load_limit1', TOOL), loadLimit5: number(p, 'load_limit5', TOOL), loadLimit15: number(p, 'load_limit15', TOOL),
  });
  let prometheus: { host: string; port: number } | undefined;
  const prom = last(p, 'prometheus_server');
  if (prom !== undefined) {
    const m = /^(?:(.+):)?(\d+)$/.exec(prom);
    if (m === null || Number(m[2]) > 65535) throw new TypeError(`${TOOL}: prometheus_server must be [HOST:]PORT, got ${JSON.stringify(prom)}`);
    prometheus = { host: m[1] ?? '127.0.0.1', port: Number(m[2]) };
  }
  return {
    options, logfile: last(p, 'logfile'), debug: number(p, 'debug', TOOL) ?? 0, prometheus, warnings: p.warnings, help,
    allowRoot: bool(p, 'allow_root') === true,
  };
}

/** Like `noshell run`: plugins fed by a monitoring core's config do not get root by default. */
export function refuseRoot(allowRoot: boolean, uid = actingUid()): void {
  if (uid !== 0 || allowRoot) return;
  throw new TypeError(`${TOOL}: refusing to run as root: every plugin it starts would run as uid 0. ` +
    'Start it as the monitoring user (e.g. User=naemon in its systemd unit), or pass --allow-root (allow_root=yes in worker.conf).');
}

