// Where the worker's results go: one GearmanClient for the servers in force,
// plus the clients of earlier configurations until they have flushed what
// they still hold (a SIGHUP that changes the servers must not lose results).
import { GearmanClient, type ClientOptions } from '../client';
import type { ServerAddress } from '../protocol/connection';

type Log = (level: 'error' | 'info' | 'debug', message: string) => void;

/** How long a replaced client may take to hand over its results. */
const RETIRE_FLUSH_MS = 30_000;

export class ResultClients {
  private current: GearmanClient;
  private readonly retired = new Set<GearmanClient>();
  private readonly gone = { submitted: 0, dropped: 0, reconnects: 0 };
  private started = false;

  constructor(servers: readonly ServerAddress[], options: ClientOptions, private readonly log: Log) {
    this.current = new GearmanClient(servers, options);
  }

  start(): void {
    this.started = true;
    this.current.start();
  }

  submit(queue: string, data: string): void {
    this.current.submit(queue, data);
  }

  /** New servers: new results go there; the old client flushes to the old ones, then closes. */
  replace(servers: readonly ServerAddress[], options: ClientOptions): void {
    const old = this.current;
    this.current = new GearmanClient(servers, options);
    if (this.started) this.current.start();
    this.retired.add(old);
    void old.flush(RETIRE_FLUSH_MS).then((all) => {
      if (!all) this.log('error', `results for servers no longer configured could not all be sent within ${RETIRE_FLUSH_MS / 1000} s`);
      const c = old.stats();
      this.gone.submitted += c.submitted;
      this.gone.dropped += c.dropped + c.queued + c.inFlight;
      this.gone.reconnects += c.reconnects;
      this.retired.delete(old);
      old.close();
    });
  }

  async flush(ms: number): Promise<void> {
    await Promise.all([this.current, ...this.retired].map((c) => c.flush(ms)));
  }

  close(): void {
    this.current.close();
    for (const c of this.retired) c.close();
  }

  stats(): { submitted: number; dropped: number; reconnects: number; queued: number } {
    const t = { ...this.gone, queued: 0 };
    for (const client of [this.current, ...this.retired]) {
      const c = client.stats();
      t.submitted += c.submitted;
      t.dropped += c.dropped;
      t.reconnects += c.reconnects;
      t.queued += c.queued + c.inFlight;
    }
    return t;
  }
}
