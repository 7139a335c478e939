// One round: fresh gearmand, the worker under test registered, every job
// submitted in the background on `service` (encrypted, as the broker module
// does), timed from the first submit until the last result is read back from
// check_results.
import { GearmanClient } from '../../gearman/client';
import { createPayloadCodec } from '../../gearman/payload/crypto';
import { formatJob } from '../../gearman/payload/job-payload';
import type { GearmanBenchOptions } from './gearman-args';
import { ResultCounter } from './gearman-results';
import { BenchGearmand, waitFor } from './gearman-server';
import { processCpuMs, sessionCpuMs } from './gearman-session-cpu';
import { WorkerProcess, type WorkerKind } from './gearman-worker-process';

export interface GearmanRound {
  worker: WorkerKind;
  maxWorker: number;
  jobs: number;
  /** Jobs whose result was read (must equal jobs). */
  counted: number;
  seconds: number;
  jobsPerSec: number;
  /** CPU of the worker and its plugins per job, ms. */
  cpuMsPerJob: number;
  /** The rest of the pipeline, per job: gearmand, and this process (submitting, reading results). */
  gearmandCpuMsPerJob: number;
  benchCpuMsPerJob: number;
}

export async function runGearmanRound(
  kind: WorkerKind, o: GearmanBenchOptions, tools: { gearmand: string; cWorker: string | null },
): Promise<GearmanRound> {
  const gearmand = new BenchGearmand();
  const worker = new WorkerProcess();
  let client: GearmanClient | null = null;
  let counter: ResultCounter | null = null;
  try {
    await gearmand.start(tools.gearmand);
    const codec = createPayloadCodec({ key: o.key });
    counter = new ResultCounter(gearmand.port, codec);
    const c = counter;
    await waitFor(() => c.ready, 10_000, 'the result reader to connect');
    client = new GearmanClient([{ host: '127.0.0.1', port: gearmand.port }], { maxQueued: o.jobs + 1 }).start();
    await worker.start({ kind, port: gearmand.port, key: o.key, maxWorker: o.maxWorker, ...(tools.cWorker !== null ? { cWorker: tools.cWorker } : {}) });
    const cl = client;
    await waitFor(() => cl.stats().queued === 0, 10_000, 'the client to connect');

    // Encrypt before the clock starts: the broker module has its payloads
    // ready too, and our AES is not what is measured.
    const payloads = Array.from({ length: o.jobs }, (_, i) => codec.encode(formatJob({
      type: 'service', hostName: 'bench-host', serviceDescription: `svc-${i}`, commandLine: o.command,
    })));
    const cpu0 = sessionCpuMs(worker.pid);
    const g0 = processCpuMs(gearmand.pid);
    const self0 = process.cpuUsage();
    const t0 = performance.now();
    for (const p of payloads) client.submit('service', p);
    // Generous: a worker that manages 20 jobs/s still finishes.
    const complete = await counter.waitFor(o.jobs, 30_000 + o.jobs * 50);
    const seconds = (counter.lastAt - t0) / 1000;
    const cpu = sessionCpuMs(worker.pid) - cpu0;
    const gCpu = processCpuMs(gearmand.pid) - g0;
    const self = process.cpuUsage(self0);
    if (counter.bad > 0) throw new Error(`${kind} worker: ${counter.bad} result(s) not OK; first: ${counter.firstBad}`);
    if (!complete) throw new Error(`${kind} worker: only ${counter.seen.size} of ${o.jobs} results arrived`);
    return {
      worker: kind, maxWorker: o.maxWorker, jobs: o.jobs, counted: counter.seen.size, seconds,
      jobsPerSec: o.jobs / seconds, cpuMsPerJob: cpu / o.jobs, gearmandCpuMsPerJob: gCpu / o.jobs,
      benchCpuMsPerJob: (self.user + self.system) / 1000 / o.jobs,
    };
  } finally {
    client?.close();
    counter?.close();
    await worker.stop();
    await gearmand.stop();
  }
}
