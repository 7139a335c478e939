// Job payloads as the broker module writes them and result payloads as the
// C worker sends them: `key=value` lines (Mod-Gearman 3.3.3 and 5.2.4, in
// test/peers/mod-gearman/; test/gearman/gearman-interop.test.ts compares with the C worker).
export type JobType = 'service' | 'host' | 'eventhandler' | 'notification';

export interface CheckJob {
  /** As given; 'service', 'host', 'eventhandler', 'notification' are run. */
  type: string | undefined;
  hostName: string | undefined;
  serviceDescription: string | undefined;
  resultQueue: string | undefined;
  commandLine: string | undefined;
  /** Seconds; ≤ 0 or absent means the worker's default. */
  timeout: number;
  /** Unix seconds with microseconds, as text (kept exact for the result). */
  coreTime: string | undefined;
  startTime: string | undefined;
  nextCheck: string | undefined;
  checkOptions: number | undefined;
  scheduledCheck: number | undefined;
  latency: number | undefined;
  pluginOutput: string | undefined;
  longPluginOutput: string | undefined;
  /** Number of known keys found; 0 means the job is discarded. */
  knownKeys: number;
}

const KNOWN = new Set([
  'host_name', 'service_description', 'type', 'result_queue', 'check_options', 'scheduled_check', 'latency',
  'next_check', 'start_time', 'core_time', 'timeout', 'command_line', 'plugin_output', 'long_plugin_output',
]);

/** Like C atoi: leading integer, else 0. */
function atoi(v: string): number {
  const m = /^\s*[+-]?\d+/.exec(v);
  return m ? Number.parseInt(m[0], 10) : 0;
}

/** Splits on '\n', key/value at the first '='; stops at the first line whose value is empty, like the C worker. */
export function parseKeyValues(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    const eq = line.indexOf('=');
    if (eq < 0 || eq === line.length - 1) break;
    out.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return out;
}

export function parseJob(text: string): CheckJob {
  const kv = parseKeyValues(text);
  let known = 0;
  for (const k of kv.keys()) if (KNOWN.has(k)) known++;
  const num = (k: string) => (kv.has(k) ? atoi(kv.get(k)!) : undefined);
  const start = kv.get('start_time');
  return {
    type: kv.get('type'),
    hostName: kv.get('host_name'),
    serviceDescription: kv.get('service_description'),
    resultQueue: kv.get('result_queue'),
    commandLine: kv.get('command_line'),
    timeout: num('timeout') ?? 0,
    // Older broker modules send start_time only; the C worker uses it for both.
    coreTime: kv.get('core_time') ?? start,
    startTime: start,
    nextCheck: kv.get('next_check') ?? start,
    checkOptions: num('check_options'),
    scheduledCheck: num('scheduled_check'),
    latency: kv.has('latency') ? Number.parseFloat(kv.get('latency')!) || 0 : undefined,
    pluginOutput: kv.get('plugin_output'),
    longPluginOutput: kv.get('long_plugin_output'),
    knownKeys: known,
  };
}

/** `%Lf`: seconds with 6 decimals. */
export function formatTime(seconds: number): string {
  return seconds.toFixed(6);
}

/** A job time as `%Lf` after the C worker's string→timeval→double trip. */
export function jobTime(value: string | undefined): string {
  if (value === undefined) return formatTime(0);
  const n = Number.parseFloat(value);
  return formatTime(Number.isFinite(n) ? Math.trunc(n * 1e6) / 1e6 : 0);
}

/** `\` → `\\`, newline → `\n` (two characters); `\r` and `\t` untouched. */
export function escapeOutput(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === '\\' ? '\\\\' : '\\n'));
}

export interface ResultFields {
  hostName: string;
  serviceDescription?: string | undefined;
  coreStartTime: string;
  startTime: number;
  finishTime: number;
  returnCode: number;
  source: string;
  /** Already escaped. */
  output: string;
}

/** The C worker's result, prefixed with `type=active` (cleartext results are only accepted when they start with `type=`). */
export function formatResult(r: ResultFields): string {
  let s = `type=active\nhost_name=${r.hostName}\ncore_start_time=${r.coreStartTime}\n` +
    `start_time=${formatTime(r.startTime)}\nfinish_time=${formatTime(r.finishTime)}\n`;
  s += `return_code=${r.returnCode}\nexited_ok=1\nsource=${r.source}\n`;
  if (r.serviceDescription !== undefined) s += `service_description=${r.serviceDescription}\n`;
  return `${s}output=${r.output}\n\n\n\n`;
}

/** A passive (or active) result in send_gearman's layout; `output` is raw text. */
export function formatSubmittedResult(r: {
  active?: boolean | undefined; hostName: string; serviceDescription?: string | undefined; startTime: number; finishTime: number;
  latency?: number | undefined; returnCode: number; output: string; source?: string | undefined;
}): string {
  let s = `type=${r.active === true ? 'active' : 'passive'}\nhost_name=${r.hostName}\nstart_time=${formatTime(r.startTime)}\n` +
    `finish_time=${formatTime(r.finishTime)}\nlatency=${formatTime(r.latency ?? 0)}\nreturn_code=${r.returnCode}\n` +
    `source=${r.source ?? 'send_gearman'}\n`;
  if (r.serviceDescription !== undefined) s += `service_description=${r.serviceDescription}\n`;
  return `${s}output=${escapeOutput(r.output)}\n\n`;
}

/** A check job in the broker module's format (for submitters and tests). */
export function formatJob(j: {
  type: JobType; hostName: string; serviceDescription?: string | undefined; commandLine: string;
  resultQueue?: string | undefined; timeout?: number | undefined; coreTime?: number | undefined; extra?: Record<string, string> | undefined;
}): string {
  const lines = [`type=${j.type}`];
  if (j.type === 'service' || j.type === 'host') lines.push(`result_queue=${j.resultQueue ?? 'check_results'}`);
  lines.push(`host_name=${j.hostName}`);
  if (j.serviceDescription !== undefined) lines.push(`service_description=${j.serviceDescription}`);
  lines.push(`core_time=${formatTime(j.coreTime ?? Date.now() / 1000)}`);
  if (j.timeout !== undefined) lines.push(`timeout=${j.timeout}`);
  for (const [k, v] of Object.entries(j.extra ?? {})) lines.push(`${k}=${v}`);
  lines.push(`command_line=${j.commandLine}`);
  return `${lines.join('\n')}\n\n\n`;
}
