// noshell run <checks file> [--format json|text] [--metrics-port N [--metrics-host H]] [--concurrency N] [--tick D] [--allow-root]
// noshell run --check <checks file>
import { CheckRunner, type CheckRunResult } from '../check/runner/runner';
import { escapeControls } from '../util/control-chars';
import { configureRunnerMetrics, type RunnerMetricsOptions } from '../metrics/scrape/metrics-state';
import { DEFAULT_PERFDATA_LABEL_MAX_BYTES, DEFAULT_PERFDATA_LIMIT } from '../metrics/model/perfdata-limit';
import { fixMmapThreshold } from '../daemon/malloc-threshold';
import { AppliedChecks } from '../config/checks-reload';
import { sameDefinition } from '../config/same-definition';
import { LineBatch } from '../daemon/line-batch';
import { loadRunChecks, onReload, type RunChecks } from '../config/run-reload';
import { serveMetrics, type MetricsServer } from '../metrics/serve/metrics-server';
import { createRunnerSource } from '../metrics/prom/runner-source';
import { usageOf } from './help';
import { metricsListenError } from '../daemon/metrics-listen-error';
import { onStopSignals, signalExitStatus, type StopSignal, type StopSignals } from '../daemon/stop-signals';
import { loopDelayInterval, startLoopDelayReport } from '../daemon/loop-delay-report';
import { takeStartSignals } from '../daemon/start-signals';
import { badValue, scanOptions, UsageError, valueOf } from './cli-options';
import { quoteText } from '../util/quote-text';
import { countOf } from '../util/count-text';
import { programWarnings } from '../config/program-warning';
import { formatDuration } from '../bench/progress';
import { TICK_TEXT, tickFromText } from '../check/model/definition';
import { DEFAULT_RUN_TICK_MS } from '../config/checks-file-shape';

const DEADLINE = 5000;

export const runUsage = usageOf('run');

const RUN_OPTIONS = {
  format: 'value', 'metrics-port': 'value', 'metrics-host': 'value', concurrency: 'value', tick: 'value', 'allow-root': 'flag', check: 'flag',
} as const;

function isDigits(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

function jsonLine(r: CheckRunResult): string {
  return JSON.stringify({
    time: new Date(r.finishedAt).toISOString(), id: r.id, state: r.state, stateName: r.stateName,
    stateType: r.stateType, attempt: r.attempt, output: r.output, longOutput: r.longOutput || undefined,
    perfdata: r.perfdata, exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, truncated: r.truncated,
    outputCut: r.outputCut || undefined, durationMs: Number(r.durationMs.toFixed(3)), latencyMs: Number(r.latencyMs.toFixed(3)), viaShell: r.viaShell,
    spawnError: r.spawnError ?? undefined,
  });
}

/** A result for a person at a terminal: the plugin's text (and the file's id) with its control characters escaped. */
function textLine(r: CheckRunResult): string {
  const time = new Date(r.finishedAt).toISOString().slice(11, 23);
  return `${time}  ${escapeControls(r.id).padEnd(20)} ${r.stateName.padEnd(8)} ${r.stateType} ${r.attempt}/${r.maxAttempts}` +
    `  ${r.durationMs.toFixed(1).padStart(8)} ms  ${escapeControls(r.output)}`;
}

export async function runCommand(args: string[], out: (s: string) => void, err: (s: string) => void): Promise<number> {
  const o = scanOptions('noshell run', runUsage, args, RUN_OPTIONS);
  const bad = (name: string, what: string, got: string) => badValue('noshell run', runUsage, name, what, got);
  const files = [...o.positionals, ...(o.rest ?? [])];
  if (files.length === 0) throw new UsageError('noshell run', 'no checks file', runUsage);
  if (files.length > 1) throw new UsageError('noshell run', `one checks file, got a second: ${quoteText(files[1])}`, runUsage);
  const file = files[0];
  const formatText = valueOf(o, 'format') ?? 'json';
  if (formatText !== 'json' && formatText !== 'text') throw bad('format', 'json or text', formatText);
  const format: 'json' | 'text' = formatText;
  const portText = valueOf(o, 'metrics-port');
  let port: number | undefined;
  if (portText !== undefined) {
    if (!isDigits(portText) || portText.length > 5 || Number(portText) > 65535) throw bad('metrics-port', 'a port number, 0-65535 (0: any free port)', portText);
    port = Number(portText);
  }
  const host = valueOf(o, 'metrics-host') ?? '127.0.0.1';
  if (host === '') throw bad('metrics-host', 'an address to listen on (127.0.0.1, ::1, 0.0.0.0)', host);
  if (valueOf(o, 'metrics-host') !== undefined && port === undefined) throw new UsageError('noshell run', '--metrics-host needs --metrics-port', runUsage);
  const concurrencyText = valueOf(o, 'concurrency');
  let concurrency: number | undefined;
  if (concurrencyText !== undefined) {
    if (!isDigits(concurrencyText) || concurrencyText.length > 9 || Number(concurrencyText) < 1) {
      throw bad('concurrency', 'a whole number of checks, 1 or more', concurrencyText);
    }
    concurrency = Number(concurrencyText);
  }
  const tickText = valueOf(o, 'tick');
  let tick: number | undefined;
  if (tickText !== undefined) {
    try {
      tick = tickFromText(tickText);
    } catch {
      throw bad('tick', TICK_TEXT, tickText);
    }
  }
  const allowRoot = o.values.has('allow-root');
  const checkOnly = o.values.has('check');
  const loopWindow = checkOnly ? null : loopDelayInterval();
  // From before the file is loaded: the start's own blocks are reported too.
  const loopReport = loopWindow === null ? null : startLoopDelayReport(loopWindow, err);
  try {
    return await runLoaded(file, { format, port, host, concurrency, tick, allowRoot, checkOnly }, out, err);
  } finally {
    loopReport?.stop();
  }
}

interface RunFlags {
  format: 'json' | 'text';
  port: number | undefined;
  host: string;
  concurrency: number | undefined;
  /** --tick, in ms. */
  tick: number | undefined;
  allowRoot: boolean;
  checkOnly: boolean;
}

async function runLoaded(file: string, flags: RunFlags, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  const { format, port, host, concurrency, tick, allowRoot, checkOnly } = flags;
  // A daemon's process: freed blocks of 1 MiB and more go back to the system (src/daemon/malloc-threshold.ts).
  if (!checkOnly) fixMmapThreshold();
  // Bad files are TypeErrors: the CLI prints them and exits 2.
  // Let go of once applied (set to null below): this frame lives as long as the process, and its
  // suspended frame kept the load's lists of every check's definition and identity (two arrays of
  // 10,000 in a heap snapshot at 10,000 checks; ~1.6 MB at 100,000).
  // Signals that come during the start are held until the handlers below are in
  // (start-signals.ts): SIGINT/SIGTERM end the load at its next step.
  const start = checkOnly ? null : takeStartSignals();
  let config: RunChecks | null;
  try {
    config = await loadRunChecks(file, allowRoot, { keyed: !checkOnly, signal: start?.signal });
  } catch (e) {
    start?.release();
    if (start?.stop == null) throw e;
    err(`noshell run: ${start.stop} during the start, stopped before any check ran\n`);
    return signalExitStatus(start.stop);
  }
  for (const w of config.warnings) err(`${checkOnly ? '' : 'noshell run: '}${w}\n`);
  if (checkOnly || start === null) {
    for (const w of programWarnings(file, config.checks.defs)) err(`${w}\n`);
    // The verdict on stdout, the warnings on stderr: `noshell run --check f && systemctl reload …`.
    out(`${file}: valid, ${countOf(config.checks.ids.length, 'check')}\n`);
    return 0;
  }
  let longestInterval = 0;
  // A checks file's intervals are ms already (its schema reads the units).
  for (const def of config.checks.defs) if (def !== undefined && typeof def.interval === 'number' && def.interval > longestInterval) longestInterval = def.interval;
  // cleanup: plugins die with the runner, SIGKILL and OOM kill included
  // (a check's "cleanup": false in the file keeps its own running).
  // --tick wins over the file's, which wins over the default (checks due within one tick start together).
  const runTick = tick ?? config.tick ?? DEFAULT_RUN_TICK_MS;
  const runner = new CheckRunner({ concurrency: concurrency ?? config.concurrency, tick: runTick, cleanup: true });
  const applied = new AppliedChecks(runner);
  applied.apply(config.checks);
  const count = config.checks.ids.length;
  const lines = new LineBatch(out);
  runner.on('result', (r: CheckRunResult) => lines.add(`${format === 'json' ? jsonLine(r) : textLine(r)}\n`));

  // Installed before anything starts: a signal that killed Node by default
  // would leave running checks (each in its own process group) behind.
  // SIGHUP reloads the file instead (run-reload.ts), as daemons do.
  let stop!: StopSignals;
  const stopped = new Promise<StopSignal>((resolve) => {
    stop = onStopSignals((sig) => {
      err(`noshell run: ${sig}, stopping\n`);
      resolve(sig);
    }, (sig) => err(`noshell run: ${sig}, already stopping; running checks are killed ${DEADLINE / 1000} s after the first signal\n`),
    ['SIGINT', 'SIGTERM']);
  });
  // The file's "metrics" options: a reload that changes them renders every check's series again.
  const startMetrics = config.metrics;
  let metricsOptions = startMetrics;
  const metrics = (next: RunnerMetricsOptions) => {
    if (sameDefinition(next, metricsOptions)) return;
    metricsOptions = next;
    // What the file leaves out goes back to the default.
    configureRunnerMetrics(runner, {
      perfdata: next.perfdata ?? true,
      perfdataLimit: next.perfdataLimit ?? DEFAULT_PERFDATA_LIMIT,
      perfdataLabelMaxBytes: next.perfdataLabelMaxBytes ?? DEFAULT_PERFDATA_LABEL_MAX_BYTES,
    });
    err('noshell run: reload: new metrics options\n');
  };
  const reload = onReload({
    file, allowRoot, concurrency: concurrency ?? config.concurrency, fixedConcurrency: concurrency !== undefined, tick: runTick, fixedTick: tick !== undefined,
    metrics, known: config.known, last: config.last,
  }, applied, () => stop.caught !== null, err);
  // eslint-disable-next-line no-useless-assignment -- not read again, but held by this frame until the process stops
  config = null;
  // Our handlers are in: what came during the start is acted on now.
  start.release();
  if (start.stop !== null) stop.trigger(start.stop);

  let server: MetricsServer | undefined;
  if (port !== undefined) {
    const source = createRunnerSource(runner, startMetrics);
    // No warm pass while a reload is applied: it would read, and copy, each slice's changes as they come (a 10 % reload of
    // 100,000 checks took 3.1–4.8 s with passes, 2.3–3.4 s without); the first pass after it reads them once.
    const refresh = source.refresh.bind(source);
    source.refresh = (minAgeMs, signal) => (applied.applying ? Promise.resolve() : refresh(minAgeMs, signal));
    server = await serveMetrics(source, { host, port }).catch((e: unknown) => {
      stop.remove();
      reload.remove();
      throw metricsListenError('noshell run', host, port, e);
    });
    err(`noshell run: metrics on ${server.url}\n`);
  }

  if (stop.caught === null) {
    runner.start();
    // First runs are spread over each check's interval (not all at once): say when the last comes,
    // or a first look at a 1 h check's series finds nothing for up to an hour.
    err(`noshell run: ${countOf(count, 'check')} from ${file}` +
      `${longestInterval > 0 ? `; first runs spread over each check's interval, the last within ${longestInterval < 1000 ? `${Math.round(longestInterval)} ms` : formatDuration(longestInterval)}` : ''}` +
      `; ${runTick === 0 ? 'no tick' : `a tick of ${runTick < 1000 ? `${runTick} ms` : formatDuration(runTick)}`}\n`);
    if (start.hup) reload.now('SIGHUP during the start');
  }
  const sig = await stopped;
  // A reload loading meanwhile is dropped (its thread terminated): the stop must not wait for it.
  reload.abort();
  // Running checks get a few seconds to finish, then aborting them kills
  // their whole groups (SIGTERM, then SIGKILL) before we exit.
  await runner.stop({ deadline: DEADLINE });
  // Every result is on stdout before the process says it stopped.
  lines.flush();
  await server?.close();
  const s = runner.stats();
  stop.remove();
  reload.remove();
  err(`noshell run: stopped after ${countOf(s.completed, 'result')} (${s.byState.OK} OK, ${s.byState.WARNING} WARNING, ` +
    `${s.byState.CRITICAL} CRITICAL, ${s.byState.UNKNOWN} UNKNOWN)\n`);
  return signalExitStatus(sig);
}
