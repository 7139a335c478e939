// popen-noshell/gearman: Mod-Gearman without the C worker: GearmanWorker
// (a drop-in for mod_gearman_worker), GearmanClient, the payload codec and
// the job and result payloads. The package root exports the same names.
export { GearmanWorker } from './worker/worker';
export type { WorkerJobEvent } from './worker/worker';
export type { GearmanWorkerOptions } from './worker/worker-options';
export { workerQueues } from './worker/worker-options';
export { GearmanClient } from './client';
export type { ClientOptions, ClientStats, Priority } from './client';
export { parseServer } from './protocol/connection';
export type { ServerAddress } from './protocol/connection';
export { createPayloadCodec, GearmanPayloadError } from './payload/crypto';
export type { PayloadCodec, CodecOptions } from './payload/crypto';
export { GearmanProtocolError } from './protocol/packet';
export { formatJob, formatSubmittedResult, parseJob } from './payload/job-payload';
export type { CheckJob, JobType } from './payload/job-payload';
