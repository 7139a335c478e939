// The runner keeps each check's last result as a compact record (issue 19:
// its numbers unboxed in one array) and makes checkStatus().last from it on
// each call. What a user sees must not change: the same fields, values and
// key order as the result the 'result' event gave, whatever the numbers;
// metrics read from the record render the same text as from the results; a
// result's perfdata drops are counted once however often it is read.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CheckRunner, type CheckRunResult } from '../../src/index';
import { LastRun } from '../../src/check/model/last-run';
import type { MetricsSource } from '../../src/metrics/model/metrics-snapshot';
import { childProcesses } from '../helpers';

const DUMMY = '/usr/lib/nagios/plugins/check_dummy';

/** Each numeric field of the result, Object.is-equal (toStrictEqual lets -0 pass for 0). */
function sameNumbers(a: CheckRunResult, b: CheckRunResult): void {
  for (const k of ['state', 'exitCode', 'durationMs', 'attempt', 'maxAttempts', 'scheduledAt', 'startedAt', 'finishedAt', 'latencyMs'] as const) {
    expect(Object.is(a[k], b[k]), k).toBe(true);
  }
  for (const k of ['userCpuMs', 'systemCpuMs', 'maxRssKb'] as const) expect(Object.is(a.rusage[k], b.rusage[k]), k).toBe(true);
}

const finite = fc.double({ noNaN: true });
const arbResult: fc.Arbitrary<CheckRunResult> = fc.record({
  state: fc.constantFrom(0, 1, 2, 3) as fc.Arbitrary<0 | 1 | 2 | 3>,
  output: fc.string(), longOutput: fc.string(), stdout: fc.string(), stderr: fc.string(), command: fc.string(),
  exitCode: fc.option(fc.integer({ min: 0, max: 255 })),
  signal: fc.option(fc.constantFrom('SIGTERM', 'SIGKILL')) as fc.Arbitrary<CheckRunResult['signal']>,
  timedOut: fc.boolean(), truncated: fc.boolean(), outputCut: fc.boolean(), viaShell: fc.boolean(),
  spawnError: fc.option(fc.constantFrom('ENOENT', 'EACCES')),
  durationMs: finite, userCpuMs: finite, systemCpuMs: finite, maxRssKb: fc.oneof(fc.integer({ min: 0, max: 2 ** 40 }), finite),
  attempt: fc.integer({ min: 1, max: 10 }), maxAttempts: fc.integer({ min: 1, max: 10 }), hard: fc.boolean(),
  scheduledAt: finite, startedAt: finite, finishedAt: finite,
  perfdataErrors: fc.array(fc.string(), { maxLength: 2 }),
}).map((x) => ({
  state: x.state, stateName: (['OK', 'WARNING', 'CRITICAL', 'UNKNOWN'] as const)[x.state], output: x.output, longOutput: x.longOutput,
  perfdata: [{ label: 'a', value: 1, uom: '' }], perfdataErrors: x.perfdataErrors, exitCode: x.exitCode, signal: x.signal,
  timedOut: x.timedOut, truncated: x.truncated, outputCut: x.outputCut, durationMs: x.durationMs,
  rusage: { userCpuMs: x.userCpuMs, systemCpuMs: x.systemCpuMs, maxRssKb: x.maxRssKb },
  stdout: x.stdout, stderr: x.stderr, command: x.command, viaShell: x.viaShell, spawnError: x.spawnError,
  id: 'c', attempt: x.attempt, maxAttempts: x.maxAttempts, stateType: x.hard ? 'HARD' : 'SOFT',
  scheduledAt: x.scheduledAt, startedAt: x.startedAt, finishedAt: x.finishedAt, latencyMs: x.startedAt - x.scheduledAt,
}));

describe('the runner\'s record of a last result', () => {
  it('gives back every field of any result: values (Object.is), key order; its perfdata arrays are its own', () => {
    fc.assert(fc.property(arbResult, (r) => {
      const rec = new LastRun(r);
      const back = rec.result();
      expect(back).toStrictEqual(r);
      expect(Object.keys(back)).toEqual(Object.keys(r));
      expect(Object.keys(back.rusage)).toEqual(Object.keys(r.rusage));
      sameNumbers(back, r);
      // The record's own perfdata array (a copy: one the result's listener changes is not the record's), the same each call.
      expect(back.perfdata).not.toBe(r.perfdata);
      expect(rec.result().perfdata).toBe(back.perfdata);
      expect(back.perfdataErrors).not.toBe(r.perfdataErrors);
      // The emitted result changed afterwards (by a 'result' listener): the record is not.
      r.perfdataErrors.push('x');
      r.perfdata.push({ label: 'pushed', value: 1, uom: '' });
      expect(rec.result().perfdataErrors.length).toBe(r.perfdataErrors.length - 1);
      expect(rec.result().perfdata.length).toBe(r.perfdata.length - 1);
      r.perfdataErrors.pop();
      r.perfdata.pop();
      // What the series read, without a result made.
      for (const k of ['state', 'stateType', 'attempt', 'maxAttempts', 'finishedAt', 'durationMs', 'latencyMs'] as const) {
        expect(Object.is(rec[k], r[k]), k).toBe(true);
      }
      expect(rec.result()).not.toBe(back);
    }), { numRuns: 2000 });
  });

  it('checkStatus().last equals the result each real run emitted, a new object each call; the state change time as before', async () => {
    const runner = new CheckRunner({ concurrency: 4 });
    // First runs spread over the interval: all four within a second, the soft one's retries 30 ms apart.
    runner.add({ id: 'ok', command: [DUMMY, '0', 'fine | t=0.25s;1;2;0; n=3'], interval: 1_000 });
    runner.add({ id: 'soft', command: [DUMMY, '2', 'bad'], interval: 1_000, retryInterval: 30, maxAttempts: 3 });
    runner.add({ id: 'missing', command: ['/nonexistent/check_x'], interval: 1_000 });
    runner.add({ id: 'slow', command: ['/bin/sleep', '5'], interval: 1_000, timeout: 100 });
    expect(runner.checkStatus().map((s) => [s.id, s.last, s.lastStateChangeAt])).toEqual(
      [['ok', null, null], ['soft', null, null], ['missing', null, null], ['slow', null, null]]);
    const seen: CheckRunResult[] = [];
    const done = new Promise<void>((resolve) => {
      runner.on('result', (r: CheckRunResult) => {
        const s = runner.checkStatus().find((x) => x.id === r.id)!;
        expect(s.last).toStrictEqual(r);
        expect(JSON.stringify(s.last)).toBe(JSON.stringify(r));
        sameNumbers(s.last!, r);
        expect(s.last).not.toBe(r);
        expect(runner.checkStatus().find((x) => x.id === r.id)!.last).not.toBe(s.last);
        seen.push(r);
        const n = (id: string) => seen.filter((x) => x.id === id).length;
        if (n('soft') >= 3 && n('ok') >= 1 && n('missing') >= 1 && n('slow') >= 1) resolve();
      });
    });
    runner.start();
    await done;
    await runner.stop();
    const byId = (id: string) => seen.filter((r) => r.id === id);
    // The soft check's three attempts: SOFT, SOFT, HARD; its state never changed, so the change time is its first run's.
    expect(byId('soft').slice(0, 3).map((r) => [r.attempt, r.stateType])).toEqual([[1, 'SOFT'], [2, 'SOFT'], [3, 'HARD']]);
    const soft = runner.checkStatus().find((s) => s.id === 'soft')!;
    expect(soft.lastStateChangeAt).toBe(byId('soft')[0].finishedAt);
    expect(byId('missing')[0]).toMatchObject({ state: 3, spawnError: 'ENOENT' });
    expect(byId('slow')[0]).toMatchObject({ state: 3, timedOut: true, signal: 'SIGTERM' });
    expect(byId('ok')[0].perfdata.map((p) => p.label)).toEqual(['t', 'n']);
    // One at a time too.
    for (const s of runner.eachCheckStatus()) expect(s.last).toStrictEqual(seen.filter((r) => r.id === s.id).at(-1));
    expect(childProcesses()).toEqual([]);
  });

  it('metrics from the records are the text from the results, and a result read twice counts its drops once', async () => {
    const runner = new CheckRunner();
    // Four label sets against a limit of two: two dropped per result.
    // Both within the first second; 'idle' not for 40 minutes: a check without a result.
    runner.add({ id: 'many', command: [DUMMY, '1', 'warn | a=1 b=2s;1;2 c=3% d=4B'], interval: 1_000 });
    runner.add({ id: 'two', command: [DUMMY, '0', 'ok | x=1.5;;;0;10'], interval: 1_000 });
    runner.add({ id: 'idle', command: [DUMMY, '0'], interval: 3_600_000 });
    const results: CheckRunResult[] = [];
    const two = new Promise<void>((resolve) => {
      runner.on('result', (r: CheckRunResult) => {
        results.push(r);
        if (results.filter((x) => x.id !== 'idle').length >= 2) resolve();
      });
    });
    runner.start();
    await two;
    await runner.stop();
    // The same runner seen through its public statuses only: each read makes new result objects.
    const { configureRunnerMetrics } = await import('../../src/index');
    const viaStatuses: MetricsSource = { stats: () => runner.stats(), checkStatus: () => runner.checkStatus() };
    for (const src of [runner, viaStatuses]) configureRunnerMetrics(src, { perfdataLimit: 2 });
    const strip = (t: string) => t.split('\n').filter((l) => l.startsWith('noshell_check_')).join('\n');
    const fromRecords = strip(runner.metrics());
    const { formatMetrics } = await import('../../src/metrics/scrape/runner-text');
    const first = strip(formatMetrics(viaStatuses));
    const second = strip(formatMetrics(viaStatuses));
    expect(first).toBe(fromRecords);
    expect(second).toBe(first);
    expect(fromRecords).toContain('noshell_check_perfdata_dropped_total{check="many",reason="limit"} 2\n');
    expect(strip(runner.metrics())).toBe(fromRecords);
    expect(fromRecords).toContain('noshell_check_perfdata{check="two",label="x",uom=""} 1.5\n');
    expect(fromRecords).toMatch(/noshell_check_state\{check="many"\} 1\n/);
    const many = results.find((r) => r.id === 'many')!;
    expect(fromRecords).toContain(`noshell_check_last_run_timestamp_seconds{check="many"} ${many.finishedAt / 1000}\n`);
    expect(fromRecords).toContain(`noshell_check_last_latency_seconds{check="many"} ${many.latencyMs / 1000}\n`);
  });

  it('checks added one after another with the same options share them, and each still runs with its own', async () => {
    const runner = new CheckRunner({ concurrency: 8, timeout: 5_000 });
    // A 1 ms interval: every check due at once (and again as soon as it ends; the first result of each is kept).
    const sleep = (id: string, s: string, timeout?: number) => runner.add({ id, command: ['/bin/sleep', s], interval: 1, timeout });
    sleep('a', '2', 150);
    sleep('b', '0.3');
    sleep('c', '2', 150);
    sleep('d', '2', 150);
    sleep('e', '0.3');
    runner.add({ id: 'x1', command: ['/usr/bin/printenv', 'X'], interval: 1, env: { X: '1' } });
    runner.add({ id: 'x2', command: ['/usr/bin/printenv', 'X'], interval: 1, env: { X: '2' } });
    const got = new Map<string, CheckRunResult>();
    const all = new Promise<void>((resolve) => {
      runner.on('result', (r: CheckRunResult) => {
        if (!got.has(r.id)) got.set(r.id, r);
        if (got.size === 7) resolve();
      });
    });
    runner.start();
    await all;
    await runner.stop({ deadline: 1_000 });
    expect(['a', 'b', 'c', 'd', 'e'].map((id) => got.get(id)!.timedOut)).toEqual([true, false, true, true, false]);
    expect([got.get('x1')!.stdout, got.get('x2')!.stdout]).toEqual(['1\n', '2\n']);
    expect(childProcesses()).toEqual([]);
  });
});
