// The answer to a status job on worker_<identifier>, in the C worker's words
// so check_gearman -q worker_<id> -s check parses it.
import type { ResolvedWorkerOptions } from './worker-options';

const ANSWER_SIZE = 65_536; // the C worker NUL-pads its answer to GM_BUFFERSIZE
export const WORKER_VERSION = '5.2.4-noshell';

export function statusAnswer(host: string, o: Pick<ResolvedWorkerOptions, 'maxWorker' | 'minWorker'>, running: number, jobs: number): string {
  const text = `${host} has ${o.maxWorker} worker and is working on ${running} jobs. Version: ${WORKER_VERSION}` +
    `|worker=${o.maxWorker};;;${o.minWorker};${o.maxWorker} jobs=${jobs}c`;
  return text.padEnd(ANSWER_SIZE, '\0');
}
