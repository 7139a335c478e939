// What a reconfigure() changes, by option name, for the worker's log line
// and for deciding what must be redone (servers dialled, queues announced).
import { serverKey } from './worker-servers';
import type { GearmanWorkerOptions, ResolvedWorkerOptions } from './worker-options';

export interface WorkerReconfigured {
  changed: string[];
  serversAdded: string[];
  serversRemoved: string[];
}

export function configChanges(
  prev: ResolvedWorkerOptions, next: ResolvedWorkerOptions, prevGiven: GearmanWorkerOptions, nextGiven: GearmanWorkerOptions,
): WorkerReconfigured {
  const changed: string[] = (Object.keys(next) as Array<keyof ResolvedWorkerOptions>)
    .filter((k) => JSON.stringify(next[k]) !== JSON.stringify(prev[k]));
  if ((prevGiven.encryption ?? true) !== (nextGiven.encryption ?? true) || prevGiven.key !== nextGiven.key || prevGiven.keyfile !== nextGiven.keyfile) {
    changed.push('encryption');
  }
  const oldKeys = new Set(prev.servers.map(serverKey));
  const newKeys = new Set(next.servers.map(serverKey));
  return {
    changed,
    serversAdded: next.servers.filter((a) => !oldKeys.has(serverKey(a))).map(serverKey),
    serversRemoved: prev.servers.filter((a) => !newKeys.has(serverKey(a))).map(serverKey),
  };
}
