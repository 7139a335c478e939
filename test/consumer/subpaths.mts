// The subpath exports as an ES module consumer writes them: each names only
// its own concern, with the same types the package root gives.
import { CheckRunner, parsePerfdata, runCheck, type CheckDefinition, type CheckResult } from 'popen-noshell/check';
import { serveMetrics, createRunnerSource, type PerfdataOption } from 'popen-noshell/metrics';
import { GearmanClient, parseJob, type GearmanWorkerOptions } from 'popen-noshell/gearman';
import * as root from 'popen-noshell';

export async function viaSubpaths(): Promise<void> {
  const def: CheckDefinition = { id: 'a', command: ['/bin/true'], interval: '30s' };
  const runner: root.CheckRunner = new CheckRunner();
  runner.add(def);
  const r: CheckResult = await runCheck(['/bin/true']);
  console.log(r.stateName, parsePerfdata('a=1')[0]?.value);
  const perfdata: PerfdataOption = { checks: ['a*'] };
  const server = await serveMetrics(createRunnerSource(runner, { perfdata }), { port: 0 });
  await server.close();
  const options: GearmanWorkerOptions = { servers: ['127.0.0.1:4730'] };
  console.log(options, typeof GearmanClient, parseJob);
  // @ts-expect-error the check entry holds no spawning names
  console.log((await import('popen-noshell/check')).exec);
  // @ts-expect-error interval is a number of ms or a duration string
  const bad: CheckDefinition = { id: 'b', command: 'true', interval: true };
  console.log(bad);
}
