// The C mod_gearman_worker to compare against: $MG_WORKER, else the test
// peers' build script of a source checkout (test/peers/build-mod-gearman.sh,
// which builds it once and then only prints paths). An installed package has
// no test/: then only noshell's worker is measured, and the table says so.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

// dist/bench/ (or src/bench/ under vitest) → the root of the checkout.
const IN_CHECKOUT = path.resolve(__dirname, '..', '..', '..', 'test', 'peers', 'build-mod-gearman.sh');

export function findCWorker(env: NodeJS.ProcessEnv = process.env): { path: string | null; why: string } {
  if (env.MG_WORKER) {
    return existsSync(env.MG_WORKER) ? { path: env.MG_WORKER, why: 'MG_WORKER' } : { path: null, why: `MG_WORKER=${env.MG_WORKER} does not exist` };
  }
  const script = [env.NOSHELL_PEERS_BUILD, IN_CHECKOUT].find((p) => p !== undefined && p !== '' && existsSync(p));
  if (script === undefined) return { path: null, why: 'no C worker: set MG_WORKER to a mod_gearman_worker binary' };
  try {
    const out = execFileSync(script, [], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
    const m = /^MG_WORKER=(.*)$/m.exec(out);
    if (m !== null && existsSync(m[1])) return { path: m[1], why: script };
    return { path: null, why: `${script} printed no MG_WORKER` };
  } catch (err) {
    return { path: null, why: `${script} failed: ${(err as Error).message.split('\n')[0]}` };
  }
}
