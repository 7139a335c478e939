// A throwaway Nagios 4 for `noshell bench --vs-nagios`: its own nagios.cfg
// in a private directory, N services of one plugin, interval_length=1,
// retention, notifications, event handlers and flap detection off. Every
// service result is counted from Nagios' own service performance data file
// (one line per result: time, latency, execution time; no fork per line).
import { spawn as cpSpawn, type ChildProcess } from 'node:child_process';
import { chownSync, chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { procCpu, type ProcCpu } from './runner-load';

export const NAGIOS = '/usr/sbin/nagios4';

export interface NagiosConfig {
  dir: string;
  services: number;
  intervalSeconds: number;
  command: string[];
  checkWorkers: number;
  /** uid/gid Nagios runs as (it drops root to nagios_user). */
  user: { name: string; uid: number; gid: number; group: string };
}

function quoteNagiosArg(a: string): string {
  if (/[$;!\n]/.test(a)) throw new TypeError(`a Nagios command line cannot carry ${JSON.stringify(a)}`);
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

/** Writes nagios.cfg and objects.cfg; returns the path of nagios.cfg. */
export function writeNagiosConfig(c: NagiosConfig): string {
  const d = c.dir;
  for (const sub of ['var', 'var/rw', 'var/spool/checkresults', 'var/tmp']) mkdirSync(path.join(d, sub), { recursive: true });
  const cfg = path.join(d, 'nagios.cfg');
  writeFileSync(cfg, [
    `log_file=${d}/var/nagios.log`, `cfg_file=${d}/objects.cfg`, `object_cache_file=${d}/var/objects.cache`,
    `precached_object_file=${d}/var/objects.precache`, `status_file=${d}/var/status.dat`,
    `state_retention_file=${d}/var/retention.dat`, 'retain_state_information=0', 'status_update_interval=10',
    `nagios_user=${c.user.name}`, `nagios_group=${c.user.group}`, 'check_external_commands=0',
    `command_file=${d}/var/rw/nagios.cmd`, `query_socket=${d}/var/rw/nagios.qh`, `lock_file=${d}/var/nagios.lock`,
    `temp_file=${d}/var/nagios.tmp`, `temp_path=${d}/var/tmp`, `check_result_path=${d}/var/spool/checkresults`,
    `check_workers=${c.checkWorkers}`, 'check_result_reaper_frequency=1', 'max_check_result_reaper_time=2',
    'max_concurrent_checks=0', 'interval_length=1', `max_service_check_spread=${Math.max(1, Math.ceil(c.intervalSeconds))}`,
    'service_inter_check_delay_method=s', 'service_interleave_factor=s', 'host_inter_check_delay_method=n',
    'service_check_timeout=10', 'host_check_timeout=10', 'cached_host_check_horizon=0', 'cached_service_check_horizon=0',
    'log_initial_states=0', 'log_service_retries=0', 'log_passive_checks=0', 'enable_notifications=0',
    'enable_event_handlers=0', 'enable_flap_detection=0', 'use_syslog=0', 'debug_level=0', 'daemon_dumps_core=0',
    'use_large_installation_tweaks=1', 'enable_environment_macros=0', 'use_retained_program_state=0',
    'check_for_orphaned_services=0', 'check_service_freshness=0', 'check_host_freshness=0', 'obsess_over_services=0',
    'process_performance_data=1', `service_perfdata_file=${d}/var/results.tsv`,
    'service_perfdata_file_template=$TIMET$\t$SERVICELATENCY$\t$SERVICEEXECUTIONTIME$',
    'service_perfdata_file_mode=a', 'service_perfdata_file_processing_interval=0',
    '',
  ].join('\n'));
  const cmd = c.command.map(quoteNagiosArg).join(' ');
  const objects = [
    `define command {\n  command_name bench\n  command_line ${cmd}\n}`,
    'define timeperiod {\n  timeperiod_name 24x7\n  alias 24x7\n' +
      ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'].map((x) => `  ${x} 00:00-24:00\n`).join('') + '}',
    'define contact {\n  contact_name bench\n  host_notifications_enabled 0\n  service_notifications_enabled 0\n' +
      '  host_notification_period 24x7\n  service_notification_period 24x7\n  host_notification_options n\n' +
      '  service_notification_options n\n  host_notification_commands bench\n  service_notification_commands bench\n}',
    // The host is never actively checked (no check_command interval): only services load the engine.
    'define host {\n  host_name benchhost\n  address 127.0.0.1\n  check_command bench\n  check_interval 0\n' +
      '  max_check_attempts 1\n  check_period 24x7\n  contacts bench\n  notification_period 24x7\n  notifications_enabled 0\n' +
      '  active_checks_enabled 0\n}',
  ];
  for (let i = 0; i < c.services; i++) {
    objects.push(`define service {\n  host_name benchhost\n  service_description svc${i}\n  check_command bench\n` +
      `  check_interval ${c.intervalSeconds}\n  retry_interval ${c.intervalSeconds}\n  max_check_attempts 1\n` +
      '  check_period 24x7\n  contacts bench\n  notification_period 24x7\n  notifications_enabled 0\n}');
  }
  writeFileSync(path.join(d, 'objects.cfg'), `${objects.join('\n')}\n`);
  // Nagios drops to nagios_user: its var/ must be its own.
  chmodSync(d, 0o755);
  for (const sub of ['var', 'var/rw', 'var/spool', 'var/spool/checkresults', 'var/tmp']) {
    chownSync(path.join(d, sub), c.user.uid, c.user.gid);
  }
  return cfg;
}

export interface NagiosSample {
  at: number;
  cpu: ProcCpu;
}

/** The engine (main process) and its workers; plugins are the workers' children. */
export function nagiosCpu(pid: number): ProcCpu {
  const main = procCpu(pid);
  let selfMs = main.selfMs;
  let childrenMs = main.childrenMs;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let kids: string[];
    try {
      kids = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean);
    } catch {
      continue;
    }
    for (const k of kids) {
      try {
        const w = procCpu(Number(k));
        selfMs += w.selfMs; // a worker's own CPU is engine overhead
        childrenMs += w.childrenMs; // the plugins it reaped
      } catch {
        // a plugin or worker that just went away
      }
    }
  }
  return { selfMs, childrenMs };
}

export function startNagios(cfg: string): ChildProcess {
  return cpSpawn(NAGIOS, [cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Result lines (time s, latency s) with time in [from, to) (Unix s). */
export function nagiosResults(dir: string, from: number, to: number): number[] {
  const file = path.join(dir, 'var', 'results.tsv');
  if (!existsSync(file)) return [];
  const latencies: number[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [t, lat] = line.split('\t');
    const at = Number(t);
    if (at >= from && at < to) latencies.push(Number(lat) * 1000);
  }
  return latencies;
}
