// Per-check series of CheckRunner: runner.metrics() and a prom-client
// registry, against real plugins; exposition validated by promtool.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckRunner, registerRunnerMetrics, type CheckRunResult } from '../../src/index';
import { childProcesses, waitFor } from '../helpers';
import { canonical, find, one, parseExposition, promtoolCheck, requirePeer } from './metrics-text';

const PLUGINS = '/usr/lib/nagios/plugins';
// Made in beforeAll: a run whose -t filter skips every test here runs neither hook, and a directory made at collection was left behind.
let tmp = '';
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-metrics-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const havePromtool = requirePeer('promtool', 'prometheus');
const havePlugins = requirePeer(`${PLUGINS}/check_load`, 'monitoring-plugins-basic');

function script(name: string, body: string): string {
  const file = path.join(tmp, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

function collect(runner: CheckRunner): CheckRunResult[] {
  const results: CheckRunResult[] = [];
  runner.on('result', (r: CheckRunResult) => results.push(r));
  return results;
}

const last = (results: CheckRunResult[], id: string) => results.filter((r) => r.id === id).at(-1)!;

describe('per-check series', () => {
  it.runIf(havePromtool && havePlugins)('state, type, attempt, times and perfdata in base units; runner.metrics() and prom-client agree; promtool accepts both', async () => {
    const runner = new CheckRunner();
    const results = collect(runner);
    runner.add({ id: 'load', command: [`${PLUGINS}/check_load`, '-w', '50,40,30', '-c', '100,80,60'], interval: 60_000 });
    // First runs are spread over each interval (0, 1/3, 2/3 of it): stopped
    // after the first run of each, before crit's retry 1 s later.
    runner.add({ id: 'printf', command: ['/usr/bin/printf', "OK - x | 'odd label'=12ms;10;@20:30;0;100 bytes=3KB;~:4;5: t=250us u=U n=7c\\n"], interval: 1000 });
    runner.add({ id: 'crit', command: [`${PLUGINS}/check_dummy`, '2', 'down'], interval: 1000, maxAttempts: 3 });
    runner.start();
    expect(await waitFor(() => new Set(results.map((r) => r.id)).size === 3, 10_000)).toBe(true);
    await runner.stop();
    const registry = new Registry();
    registerRunnerMetrics(runner, registry);
    const text = runner.metrics();
    const fromRegistry = await registry.metrics();
    expect(promtoolCheck(text)).toEqual({ status: 0, output: '' });
    expect(promtoolCheck(fromRegistry)).toEqual({ status: 0, output: '' });
    const samples = parseExposition(text);
    // Same samples whichever renders them (apart from the 10-s rate, which moves with the clock).
    const noRate = (t: string) => canonical(parseExposition(t)).filter((l) => !l.startsWith('noshell_checks_per_second'));
    expect(noRate(fromRegistry)).toEqual(noRate(text));

    const load = last(results, 'load');
    expect(one(samples, 'noshell_check_state', { check: 'load' })).toBe(load.state);
    expect(one(samples, 'noshell_check_state_type', { check: 'load' })).toBe(1);
    expect(one(samples, 'noshell_check_last_run_timestamp_seconds', { check: 'load' })).toBe(load.finishedAt / 1000);
    expect(one(samples, 'noshell_check_last_execution_seconds', { check: 'load' })).toBeCloseTo(load.durationMs / 1000, 12);
    expect(one(samples, 'noshell_check_last_latency_seconds', { check: 'load' })).toBeCloseTo(load.latencyMs / 1000, 12);
    expect(load.perfdata.map((p) => p.label)).toEqual(['load1', 'load5', 'load15']);
    for (const p of load.perfdata) {
      expect(one(samples, 'noshell_check_perfdata', { check: 'load', label: p.label, uom: '' })).toBe(p.value);
      expect(one(samples, 'noshell_check_perfdata_warn', { check: 'load', label: p.label, bound: 'high' })).toBe(p.warn!.end);
      expect(one(samples, 'noshell_check_perfdata_min', { check: 'load', label: p.label })).toBe(0);
    }

    const crit = last(results, 'crit');
    expect(crit).toMatchObject({ state: 2, stateType: 'SOFT', attempt: 1 });
    expect(one(samples, 'noshell_check_state', { check: 'crit' })).toBe(2);
    expect(one(samples, 'noshell_check_state_type', { check: 'crit' })).toBe(0);
    expect(one(samples, 'noshell_check_attempt', { check: 'crit' })).toBe(1);
    expect(one(samples, 'noshell_check_max_attempts', { check: 'crit' })).toBe(3);
    expect(one(samples, 'noshell_check_interval_seconds', { check: 'crit' })).toBe(1);

    const pf = { check: 'printf' };
    expect(one(samples, 'noshell_check_perfdata', { ...pf, label: 'odd label', uom: 's' })).toBe(0.012);
    expect(one(samples, 'noshell_check_perfdata_warn', { ...pf, label: 'odd label', bound: 'low', alert: 'outside' })).toBe(0);
    expect(one(samples, 'noshell_check_perfdata_warn', { ...pf, label: 'odd label', bound: 'high' })).toBe(0.01);
    expect(one(samples, 'noshell_check_perfdata_crit', { ...pf, label: 'odd label', bound: 'low', alert: 'inside' })).toBe(0.02);
    expect(one(samples, 'noshell_check_perfdata_crit', { ...pf, label: 'odd label', bound: 'high', alert: 'inside' })).toBe(0.03);
    expect(one(samples, 'noshell_check_perfdata_max', { ...pf, label: 'odd label' })).toBe(0.1);
    expect(one(samples, 'noshell_check_perfdata', { ...pf, label: 'bytes', uom: 'B' })).toBe(3072);
    // ~:4 has no low end, 5: no high end.
    expect(find(samples, 'noshell_check_perfdata_warn', { ...pf, label: 'bytes' }).map((s) => [s.labels.bound, s.value])).toEqual([['high', 4096]]);
    expect(find(samples, 'noshell_check_perfdata_crit', { ...pf, label: 'bytes' }).map((s) => [s.labels.bound, s.value])).toEqual([['low', 5120]]);
    expect(one(samples, 'noshell_check_perfdata', { ...pf, label: 't', uom: 's' })).toBe(0.00025);
    expect(one(samples, 'noshell_check_perfdata', { ...pf, label: 'u', uom: '' })).toBeNaN();
    expect(one(samples, 'noshell_check_perfdata', { ...pf, label: 'n', uom: 'c' })).toBe(7);

    // Summaries: quantiles over recent runs, _sum and _count over all of them.
    expect(one(samples, 'noshell_check_execution_seconds_count')).toBe(results.length);
    const sum = results.reduce((s, r) => s + r.durationMs, 0) / 1000;
    expect(one(samples, 'noshell_check_execution_seconds_sum')).toBeCloseTo(sum, 9);
    expect(one(samples, 'noshell_check_latency_seconds_count')).toBe(results.length);
    expect(childProcesses()).toEqual([]);
  });

  it.runIf(havePromtool)('odd check ids and perfdata labels are escaped and come back exact (quotes, backslashes, newlines, Unicode, ",label:")', async () => {
    const ids = ['q"uote', 'back\\slash\\', 'new\nline', 'ünï€ 😀 \u2028', 'a,label:b', 'a'];
    const runner = new CheckRunner();
    const results = collect(runner);
    const out = script('odd.sh', `printf '%s\\n' "OK | 'we\\"ird\\\\ ü'=1 'it''s'=2 c=3 'b,label:c'=4"`);
    for (const id of ids) runner.add({ id, command: [out], interval: 600 });
    runner.start();
    expect(await waitFor(() => new Set(results.map((r) => r.id)).size === ids.length, 10_000)).toBe(true);
    await runner.stop();
    expect(results[0].perfdata.map((p) => p.label)).toEqual(['we"ird\\ ü', "it's", 'c', 'b,label:c']);
    const registry = new Registry();
    registerRunnerMetrics(runner, registry);
    for (const text of [runner.metrics(), await registry.metrics()]) {
      expect(promtoolCheck(text)).toEqual({ status: 0, output: '' });
      const samples = parseExposition(text);
      expect(new Set(find(samples, 'noshell_check_state').map((s) => s.labels.check))).toEqual(new Set(ids));
      for (const id of ids) {
        expect(one(samples, 'noshell_check_perfdata', { check: id, label: 'we"ird\\ ü' })).toBe(1);
        expect(one(samples, 'noshell_check_perfdata', { check: id, label: "it's" })).toBe(2);
      }
      // prom-client's own label hash would make these two one series.
      expect(one(samples, 'noshell_check_perfdata', { check: 'a,label:b', label: 'c' })).toBe(3);
      expect(one(samples, 'noshell_check_perfdata', { check: 'a', label: 'b,label:c' })).toBe(4);
    }
  });

  it('OK → CRITICAL → OK: state, attempt and last state change follow; removed checks lose their series', async () => {
    const stateFile = path.join(tmp, 'flip-state');
    writeFileSync(stateFile, '0');
    const flip = script('flip.sh', `s=$(cat '${stateFile}'); echo "STATE $s | s=$s"; exit "$s"`);
    const runner = new CheckRunner();
    const results = collect(runner);
    runner.add({ id: 'flip', command: [flip], interval: 50 });
    runner.add({ id: 'other', command: [flip], interval: 60_000 });
    const metrics = () => parseExposition(runner.metrics());
    const seen: Array<{ state: number; change: number; run: number }> = [];
    const sample = () => {
      const s = metrics();
      seen.push({
        state: one(s, 'noshell_check_state', { check: 'flip' }),
        change: one(s, 'noshell_check_last_state_change_timestamp_seconds', { check: 'flip' }),
        run: one(s, 'noshell_check_last_run_timestamp_seconds', { check: 'flip' }),
      });
    };
    runner.start();
    const flipRuns = () => results.filter((r) => r.id === 'flip').length;
    for (const [state, runs] of [['0', 3], ['2', 6], ['0', 9]] as const) {
      writeFileSync(stateFile, state);
      // One run may have read the file before it changed: wait for two more.
      expect(await waitFor(() => flipRuns() >= runs && last(results, 'flip').state === Number(state), 10_000)).toBe(true);
      sample();
      expect(await waitFor(() => flipRuns() >= runs + 1, 10_000)).toBe(true);
      sample();
    }
    expect(seen.map((s) => s.state)).toEqual([0, 0, 2, 2, 0, 0]);
    // Each pair: a later run, the same state change.
    for (let i = 0; i < 6; i += 2) {
      expect(seen[i + 1].run).toBeGreaterThan(seen[i].run);
      expect(seen[i + 1].change).toBe(seen[i].change);
    }
    expect(seen[2].change).toBeGreaterThan(seen[0].change);
    expect(seen[4].change).toBeGreaterThan(seen[2].change);
    expect(one(metrics(), 'noshell_check_perfdata', { check: 'flip', label: 's' })).toBe(0);
    const status = runner.checkStatus().find((c) => c.id === 'flip')!;
    expect(status.last).toMatchObject({ id: 'flip', state: 0, output: 'STATE 0' });
    expect(status.lastStateChangeAt! / 1000).toBe(seen[5].change);
    expect(status.definition.interval).toBe(50);

    runner.remove('flip');
    const after = runner.metrics();
    expect(after).not.toContain('check="flip"');
    expect(after).toContain('check="other"');
    await runner.stop();
    expect(childProcesses()).toEqual([]);
  });

  it('a perfdata label that changes every run stays bounded: label sets capped, the rest counted', async () => {
    const counter = path.join(tmp, 'churn-count');
    writeFileSync(counter, '0');
    const churn = script('churn.sh', `n=$(( $(cat '${counter}') + 1 )); echo $n > '${counter}'; echo "OK | run_$n=$n fixed=1"`);
    const runner = new CheckRunner();
    const registry = new Registry();
    registerRunnerMetrics(runner, registry, { perfdataLimit: 5 });
    runner.add({ id: 'churn', command: [churn], interval: 20 });
    // A scrape per result: every run's new label is offered to the cap.
    const scrapes: Array<Promise<string>> = [];
    runner.on('result', () => scrapes.push(registry.metrics()));
    runner.start();
    expect(await waitFor(() => scrapes.length >= 40, 20_000)).toBe(true);
    await runner.stop();
    const texts = await Promise.all(scrapes);
    // A scrape joins one whose snapshot is being made, so the scrape a result
    // started may show the runner one result before it (never older): the
    // 5th shows at least 4 runs, and one more scrape after the last shows all.
    texts.push(await registry.metrics());
    const at = (i: number) => parseExposition(texts[i]);
    const perfSeries = (i: number) => find(at(i), 'noshell_check_perfdata', { check: 'churn' }).length;
    // 'fixed' and run_1..run_4 fill the 5 sets; from run 5 on, each new label is dropped.
    expect(one(at(4), 'noshell_check_perfdata_label_sets', { check: 'churn' })).toBe(5);
    const n = texts.length - 1; // results
    expect(one(at(n), 'noshell_check_perfdata_label_sets', { check: 'churn' })).toBe(5);
    expect(one(at(n), 'noshell_check_perfdata_label_sets_limit')).toBe(5);
    expect(one(at(n), 'noshell_check_perfdata_dropped_total', { check: 'churn', reason: 'limit' })).toBe(n - 4);
    expect(perfSeries(n)).toBe(1); // only 'fixed'
    expect(one(at(n), 'noshell_check_perfdata', { check: 'churn', label: 'fixed' })).toBe(1);
    // The scrape does not grow with the runs.
    expect(texts[n].length).toBeLessThanOrEqual(texts[10].length + 200);
    // runner.metrics() shares the cap: it shows what the registry admitted.
    expect(one(parseExposition(runner.metrics()), 'noshell_check_perfdata_label_sets', { check: 'churn' })).toBe(5);
  });

  it('a perfdata label of 60 KB is not exported nor kept: counted as too_long, memory held stays bounded', async () => {
    const counter = path.join(tmp, 'long-count');
    writeFileSync(counter, '0');
    // A different 60 KB label every run, beside a normal one.
    const long = script('long.sh', `n=$(( $(cat '${counter}') + 1 )); echo $n > '${counter}'
printf 'OK | '; head -c 60000 /dev/zero | tr '\\0' a; printf '_%s=1 ok=1\\n' $n`);
    const runner = new CheckRunner();
    const registry = new Registry();
    registerRunnerMetrics(runner, registry);
    runner.add({ id: 'long', command: [long], interval: 20 });
    const results = collect(runner);
    const scrapes: Array<Promise<string>> = [];
    runner.on('result', () => scrapes.push(registry.metrics()));
    runner.start();
    expect(await waitFor(() => scrapes.length >= 20, 20_000)).toBe(true);
    await runner.stop();
    // The plugin really printed it, and it was parsed as a label.
    expect(results[0].perfdata.map((p) => p.label.length)).toEqual([60_000 + 2, 2]);
    const texts = await Promise.all(scrapes);
    const final = parseExposition(texts.at(-1)!);
    expect(one(final, 'noshell_check_perfdata_dropped_total', { check: 'long', reason: 'too_long' })).toBe(texts.length);
    expect(find(final, 'noshell_check_perfdata', { check: 'long' }).map((s) => s.labels.label)).toEqual(['ok']);
    expect(one(final, 'noshell_check_perfdata_label_sets', { check: 'long' })).toBe(1);
    expect(Math.max(...texts.map((t) => t.length))).toBeLessThan(20_000);
    const { perfdataLimitOf } = await import('../../src/metrics/model/perfdata-limit');
    const limit = perfdataLimitOf(runner);
    expect(limit.maxLabelBytes).toBe(256);
    expect(limit.heldLabelChars()).toBeLessThanOrEqual(2 * 256 * limit.limit + 8 * limit.limit);
    expect(limit.heldLabelChars()).toBeLessThan(100);
    expect(() => registerRunnerMetrics(runner, new Registry(), { perfdataLabelMaxBytes: 0 })).toThrow(TypeError);
  });

  it('prom-client (~140 ms to load) is loaded only when metrics are registered, not by require(\'noshell\')', () => {
    const dist = path.resolve(__dirname, '..', '..', 'dist', 'index.js');
    const probe = `const n = require(${JSON.stringify(dist)});
      const loaded = () => Object.keys(require.cache).some((k) => k.includes('/node_modules/prom-client/'));
      const before = loaded();
      n.createRunnerRegistry(new n.CheckRunner());
      console.log(JSON.stringify([before, loaded()]));`;
    const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual([false, true]);
  });

  it('one runner per registry; unregister() removes its series', () => {
    const runner = new CheckRunner();
    const registry = new Registry();
    const handle = registerRunnerMetrics(runner, registry);
    expect(handle.names).toContain('noshell_check_state');
    expect(() => registerRunnerMetrics(new CheckRunner(), registry)).toThrow(/registered already/);
    expect(() => registerRunnerMetrics(runner, new Registry(), { perfdataLimit: -1 })).toThrow(TypeError);
    handle.unregister();
    expect(registry.getSingleMetric('noshell_check_state')).toBeUndefined();
    registerRunnerMetrics(new CheckRunner(), registry);
    expect(registry.getSingleMetric('noshell_check_state')).toBeDefined();
  });
});
