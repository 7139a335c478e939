// noshell gearman-submit: puts a check job (as the broker module would) or a
// check result (send_gearman's options) on a Gearman queue and waits until
// gearmand has taken it.
import { readFileSync } from 'node:fs';
import { GearmanClient, type Priority } from '../gearman/client';
import { parseServer } from '../gearman/protocol/connection';
import { createPayloadCodec } from '../gearman/payload/crypto';
import { formatJob, formatSubmittedResult, type JobType } from '../gearman/payload/job-payload';
import { last, list, number, parseToolArgs, yesNo, type OptionSpec } from './gearman-args';

export const gearmanSubmitUsage = 'noshell gearman-submit --server=HOST[:PORT] [--key=K|--keyfile=F|--encryption=no] [--wait=S] ' +
  '(--type=service|host|eventhandler|notification --host=H [--service=S] --command=CMD [--timeout=S] [--queue=Q] [--priority=normal|high|low] ' +
  '| --host=H [--service=S] --returncode=N [--message=TEXT (else stdin)] [--result_queue=Q] [--active] [--starttime=T] [--finishtime=T] [--latency=S])';

const spec: OptionSpec = {
  kinds: {
    server: 'list', key: 'value', keyfile: 'value', encryption: 'bool', type: 'value', host: 'value', service: 'value',
    command: 'value', timeout: 'value', queue: 'value', priority: 'value', returncode: 'value', message: 'value',
    result_queue: 'value', active: 'bool', starttime: 'value', finishtime: 'value', latency: 'value', help: 'bool',
    debug: 'value', wait: 'value',
  },
  aliases: { password: 'key', passwordfile: 'keyfile', r: 'returncode', m: 'message', t: 'timeout', h: 'help' },
};

const TOOL = 'noshell gearman-submit';

export async function gearmanSubmitCommand(args: string[], out: (s: string) => void, stdin: () => string = () => readFileSync(0, 'utf8')): Promise<number> {
  const p = parseToolArgs(args, spec, TOOL);
  if (yesNo(last(p, 'help'), false)) {
    out(`usage: ${gearmanSubmitUsage}\n`);
    return 0;
  }
  const servers = list(p, 'server').map(parseServer);
  if (servers.length === 0) throw new TypeError(`${TOOL}: no server given (--server=HOST[:PORT])`);
  const encryption = yesNo(last(p, 'encryption'), true);
  const key = last(p, 'key');
  const keyfile = last(p, 'keyfile');
  if (encryption && key === undefined && keyfile === undefined) {
    throw new TypeError(`${TOOL}: no encryption key provided, use --key=..., --keyfile=... or --encryption=no`);
  }
  const codec = createPayloadCodec({ encryption, key, keyfile });
  const host = last(p, 'host');
  if (host === undefined) throw new TypeError(`${TOOL}: --host is required`);
  const service = last(p, 'service');
  const command = last(p, 'command');
  const waitSec = number(p, 'wait', TOOL) ?? 10;
  let queue: string;
  let payload: string;
  let priority: Priority = 'normal';
  if (command !== undefined) {
    const type = (last(p, 'type') ?? (service !== undefined ? 'service' : 'host')) as JobType;
    if (!['service', 'host', 'eventhandler', 'notification'].includes(type)) {
      throw new TypeError(`${TOOL}: --type must be service, host, eventhandler or notification, got ${JSON.stringify(type)}`);
    }
    if (type === 'service' && service === undefined) throw new TypeError(`${TOOL}: a service job needs --service`);
    const pr = last(p, 'priority') ?? (type === 'service' ? 'low' : 'normal');
    if (pr !== 'normal' && pr !== 'high' && pr !== 'low') throw new TypeError(`${TOOL}: --priority must be normal, high or low`);
    priority = pr;
    queue = last(p, 'queue') ?? type;
    payload = formatJob({
      type, hostName: host, serviceDescription: service, commandLine: command,
      resultQueue: last(p, 'result_queue'), timeout: number(p, 'timeout', TOOL),
    });
  } else {
    const rc = number(p, 'returncode', TOOL);
    if (rc === undefined) throw new TypeError(`${TOOL}: give --command (a check job) or --returncode (a result)`);
    const now = Date.now() / 1000;
    payload = formatSubmittedResult({
      active: yesNo(last(p, 'active'), false), hostName: host, serviceDescription: service,
      startTime: number(p, 'starttime', TOOL) ?? now, finishTime: number(p, 'finishtime', TOOL) ?? now,
      latency: number(p, 'latency', TOOL) ?? 0, returnCode: Math.trunc(rc), output: last(p, 'message') ?? stdin(),
    });
    queue = last(p, 'result_queue') ?? 'check_results';
  }
  const client = new GearmanClient(servers).start();
  try {
    client.submit(queue, codec.encode(payload), { priority });
    if (!(await client.flush(waitSec * 1000))) {
      out(`${TOOL}: no Gearman server took the job within ${waitSec} s\n`);
      return 2;
    }
  } finally {
    client.close();
  }
  out(`submitted to ${queue}\n`);
  return 0;
}
