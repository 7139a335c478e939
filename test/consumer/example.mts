// Compiled by test/package/package-hygiene.test.ts against the packed package's types
// (strict, exactOptionalPropertyTypes; module node16, nodenext and moduleResolution bundler): every public API once,
// as README shows it. Never run. The @ts-expect-error lines fail the build
// if the types resolve to `any`.
import {
  spawn, exec, execFile, popen, parseCommand, runCheck, parsePluginOutput, parsePerfdata, parseRange, checkRange,
  CheckRunner, SpawnError, ExecError, ShellSyntaxError,
  type CheckResult, type ExecOptions, type ExecResult, type ExitStatus, type PerfDatum, type SpawnOptions, type ThresholdRange,
} from 'popen-noshell';
import noshell from 'popen-noshell';

export async function examples(): Promise<void> {
  const options: SpawnOptions = { cwd: '/', timeout: 1000, killSignal: 'SIGTERM', stderr: 'stdout', method: 'auto' };
  const child = spawn('tail', ['-f', '/var/log/syslog'], options);
  child.stdout?.on('data', (chunk: Buffer) => process.stdout.write(chunk));
  const killed: boolean = child.kill();
  const status: ExitStatus = await child.exited;
  const code: number | null = status.exitCode;

  const r: ExecResult = await execFile('/bin/echo', ['hi'], { reject: false, maxBuffer: 1024 });
  const text: string | Buffer = r.stdout;
  const viaShell: boolean = (await exec('ls /tmp | wc -l', { shell: 'auto' })).viaShell;
  await exec(['ls', '-l', '/tmp/a file'], { input: 'x', encoding: 'buffer', signal: new AbortController().signal });

  const reader = popen('ps -eo pid,comm', 'r');
  for await (const line of reader.lines()) process.stdout.write(`${line}\n`);
  const closed: ExitStatus = await reader.close();
  const writer = popen(['logger', '-t', 'myapp'], 'w');
  writer.write('hello\n');
  await writer.close();

  const parsed = parseCommand(`FOO='a b' check_http -H example.com`);
  const argv: string[] = parsed.argv;
  const needsShell: boolean = parsed.needsShell;

  const check: CheckResult = await runCheck('/usr/lib/nagios/plugins/check_dummy 0 ok', { timeout: 10_000 });
  const state: 0 | 1 | 2 | 3 = check.state;
  const out = parsePluginOutput('OK - fine | load=0.5;5;10;0;');
  const perf: PerfDatum[] = parsePerfdata('load=0.5;5;10;0; \'a b\'=3MB');
  const range: ThresholdRange = parseRange('@10:20');
  const alert: boolean = checkRange(15, range);
  // A parsed item's thresholds may be shared and frozen: read and pass them, never write them.
  const warn: ThresholdRange | undefined = perf[0].warn;
  if (warn !== undefined && checkRange(0.5, warn)) perf.push({ label: 'alerted', value: 1, uom: '' });
  // @ts-expect-error a parsed item's thresholds are read-only
  if (perf[0].warn) perf[0].warn.end = 5000;

  const runner = new CheckRunner({ concurrency: 4, timeout: 10_000 });
  runner.add({ id: 'load', command: ['/usr/lib/nagios/plugins/check_load', '-w', '5,4,3', '-c', '10,8,6'], interval: 30_000 });
  runner.on('result', () => {});
  runner.start();
  const running: number = runner.stats().running;
  const metrics: string = runner.metrics();
  await runner.stop({ deadline: 5000 });

  try {
    await execFile('/nonexistent');
  } catch (e) {
    if (e instanceof SpawnError) console.log(e.code, e.errno, e.syscall, e.path, e.spawnargs);
    if (e instanceof ExecError) console.log(e.exitCode, e.signal, e.timedOut, e.stdout, e.stderr, e.command);
    if (e instanceof ShellSyntaxError) console.log(e.reasons);
  }
  // ExecError's output is typed by the encoding the call used, as the result's.
  try {
    await exec('false', { timeout: '10s', forceKillAfter: '2s' });
  } catch (e) {
    if (e instanceof ExecError) {
      const err = e as ExecError<string>;
      const firstLine: string = err.stdout.split('\n')[0] + err.result.stderr.trim();
      console.log(firstLine);
      // @ts-expect-error a string has no byteLength
      console.log(err.stderr.byteLength);
    }
  }
  // Durations as checks files take them.
  await runCheck('true', { timeout: '30s' });
  new CheckRunner().add({ id: 'd', command: 'true', interval: '1m', retryInterval: '10s' });
  const same: typeof exec = noshell.exec;

  // The result's type follows `encoding` (issue 20): no casts.
  const echoed = await exec(['echo', 'x']);
  const trimmed: string = echoed.stdout.trim();
  const bytes = await execFile('/bin/echo', ['x'], { encoding: 'buffer' });
  const size: number = bytes.stdout.byteLength + bytes.stderr.byteLength;
  const utf8: string = (await execFile('/bin/echo', undefined, { encoding: 'utf8', reject: false })).stderr.toUpperCase();
  const asBuffer: ExecResult<Buffer> = await exec('echo x', { encoding: 'buffer', timeout: 1000 });
  // @ts-expect-error a string has no byteLength
  console.log(echoed.stdout.byteLength);
  // @ts-expect-error a Buffer has no trim()
  bytes.stderr.trim();
  // @ts-expect-error encoding 'buffer' gives no string result
  const notText: ExecResult<string> = await exec('echo x', { encoding: 'buffer' });
  // Options whose encoding is not known here: either.
  const someOptions: ExecOptions = { encoding: Math.random() > 0.5 ? 'buffer' : 'utf8' };
  const either = await exec('echo x', someOptions);
  // @ts-expect-error string | Buffer: narrow it first
  either.stdout.trim();
  const narrowed: string = typeof either.stdout === 'string' ? either.stdout : either.stdout.toString('utf8');

  // @ts-expect-error a number is not a command
  await exec(42);
  // @ts-expect-error popen modes are 'r' and 'w'
  popen('ls', 'x');
  // @ts-expect-error parseRange takes the text of a range
  parseRange(10);
  // @ts-expect-error states are 0-3
  const bad: CheckResult['state'] = 4;

  // Under exactOptionalPropertyTypes too, an option may be given as undefined: it means the default.
  const unset: number | undefined = undefined;
  await exec('true', { timeout: unset, shell: undefined, cwd: undefined, signal: undefined });
  await runCheck('true', { timeout: unset, timeoutState: undefined, maxOutput: unset });
  new CheckRunner({ concurrency: unset }).add({ id: 'u', command: 'true', interval: 1000, retryInterval: unset });
  popen('true', 'r', { stderr: undefined }).subprocess.kill();
  spawn('true', [], { forceKillAfter: unset, uid: unset, gid: unset });

  console.log(trimmed, size, utf8, asBuffer, notText, narrowed);
  console.log(killed, code, text, viaShell, closed, argv, needsShell, state, out.output, perf, alert, running, metrics, same, bad);
}
