// noshell run <checks.json> [--format json|text] [--metrics-port N] [--concurrency N]
import http from 'node:http';
import { CheckRunner, type CheckRunResult } from '../check/runner';
import { loadChecksFile } from './checks-file';
import { onStopSignals, signalExitStatus, type StopSignal, type StopSignals } from './stop-signals';

const DEADLINE = 5000;

export const runUsage = 'noshell run <checks.json> [--format json|text] [--metrics-port N] [--concurrency N]';

function jsonLine(r: CheckRunResult): string {
  return JSON.stringify({
    time: new Date(r.finishedAt).toISOString(), id: r.id, state: r.state, stateName: r.stateName,
    stateType: r.stateType, attempt: r.attempt, output: r.output, longOutput: r.longOutput || undefined,
    perfdata: r.perfdata, exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, truncated: r.truncated,
    durationMs: Number(r.durationMs.toFixed(3)), latencyMs: Number(r.latencyMs.toFixed(3)), viaShell: r.viaShell,
    spawnError: r.spawnError ?? undefined,
  });
}

function textLine(r: CheckRunResult): string {
  const time = new Date(r.finishedAt).toISOString().slice(11, 23);
  return `${time}  ${r.id.padEnd(20)} ${r.stateName.padEnd(8)} ${r.stateType} ${r.attempt}/${r.maxAttempts}` +
    `  ${r.durationMs.toFixed(1).padStart(8)} ms  ${r.output}`;
}

export async function runCommand(args: string[], out: (s: string) => void, err: (s: string) => void): Promise<number> {
  let file: string | undefined;
  let format: 'json' | 'text' = 'json';
  let port: number | undefined;
  let concurrency: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--format' && (args[i + 1] === 'json' || args[i + 1] === 'text')) format = args[++i] as 'json' | 'text';
    else if (a === '--metrics-port' && /^\d+$/.test(args[i + 1] ?? '')) port = Number(args[++i]);
    else if (a === '--concurrency' && /^\d+$/.test(args[i + 1] ?? '')) concurrency = Number(args[++i]);
    else if (!a.startsWith('--') && file === undefined) file = a;
    else throw new TypeError(`noshell run: bad argument ${a}\nusage: ${runUsage}`);
  }
  if (file === undefined) throw new TypeError(`noshell run: no checks file\nusage: ${runUsage}`);
  const config = loadChecksFile(file);
  const runner = new CheckRunner({ ...config.runner, ...(concurrency !== undefined ? { concurrency } : {}) });
  for (const check of config.checks) runner.add(check);
  runner.on('result', (r: CheckRunResult) => out(`${format === 'json' ? jsonLine(r) : textLine(r)}\n`));

  // Installed before anything starts: a signal that killed Node by default
  // would leave running checks (each in its own process group) behind.
  // SIGHUP stops like SIGTERM for now (it may mean reload one day).
  let stop!: StopSignals;
  const stopped = new Promise<StopSignal>((resolve) => {
    stop = onStopSignals((sig) => {
      err(`noshell run: ${sig}, stopping\n`);
      resolve(sig);
    }, (sig) => err(`noshell run: ${sig}, already stopping; running checks are killed ${DEADLINE / 1000} s after the first signal\n`));
  });

  let server: http.Server | undefined;
  if (port !== undefined) {
    server = http.createServer((req, res) => {
      if (req.url === '/metrics') {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
        res.end(runner.metrics());
      } else {
        res.writeHead(404).end('not found\n');
      }
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, '127.0.0.1', resolve);
    }).catch((e: unknown) => {
      stop.remove();
      throw e;
    });
    err(`noshell run: metrics on http://127.0.0.1:${(server.address() as { port: number }).port}/metrics\n`);
  }

  runner.start();
  err(`noshell run: ${config.checks.length} checks from ${file}\n`);
  const sig = await stopped;
  // Running checks get a few seconds to finish, then aborting them kills
  // their whole groups (SIGTERM, then SIGKILL) before we exit.
  await runner.stop({ deadline: DEADLINE });
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  const s = runner.stats();
  stop.remove();
  err(`noshell run: stopped after ${s.completed} results (${s.byState.OK} OK, ${s.byState.WARNING} WARNING, ` +
    `${s.byState.CRITICAL} CRITICAL, ${s.byState.UNKNOWN} UNKNOWN)\n`);
  return signalExitStatus(sig);
}
