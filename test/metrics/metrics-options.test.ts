// What large sites turn off: perfdata series (all, or outside an allow-list
// of checks and labels) and a check's noshell_check_* series. The samples
// left out are really absent, and every other sample is the same.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { formatMetrics } from '../../src/metrics/scrape/runner-text';
import { loadChecksFile } from '../../src/config/checks-file';
import { CheckRunner, configureRunnerMetrics, registerRunnerMetrics } from '../../src/index';
import { bigSource, fivePerfdata, FakeSource } from './metrics-source';
import { canonical, find, parseExposition, type ParsedSample } from './metrics-text';

const perCheck = (s: ParsedSample) => s.labels.check !== undefined;
const isPerf = (s: ParsedSample) => s.name.startsWith('noshell_check_perfdata') && s.name !== 'noshell_check_perfdata_label_sets_limit';

/** Samples of a fresh source of these checks, exposed as `options` say. */
function scrape(setup: (s: FakeSource) => void, options?: Parameters<typeof configureRunnerMetrics>[1]): ParsedSample[] {
  const s = new FakeSource();
  setup(s);
  if (options !== undefined) configureRunnerMetrics(s, options);
  return parseExposition(formatMetrics(s));
}

function fleet(s: FakeSource, metrics?: Record<string, unknown>): void {
  for (const id of ['web-1', 'web-2', 'db-1', 'mail']) {
    s.define(id, metrics?.[id] === undefined ? {} : { metrics: metrics[id] as false });
    s.result(id, 0, fivePerfdata(1));
  }
}

describe('metrics options', () => {
  it('one check with five perfdata items makes 32 samples: 10 noshell_check_*, 22 perfdata (docs/metrics.md)', () => {
    const samples = parseExposition(formatMetrics(bigSource(1))).filter(perCheck);
    expect(samples.length).toBe(32);
    expect(samples.filter((s) => !isPerf(s)).length).toBe(10);
    const off = scrape((s) => fleet(s), { perfdata: false }).filter(perCheck);
    expect(off.length).toBe(4 * 10);
    const listed = scrape((s) => fleet(s), { perfdata: { checks: ['web-*', 'db1'], labels: ['rta', 'pl'] } });
    expect(listed.filter((s) => s.labels.check === 'web-1').length).toBe(27);
    expect(listed.filter((s) => s.labels.check === 'mail').length).toBe(10);
  });

  it('perfdata: false leaves out every perfdata series; the rest is unchanged', () => {
    const all = scrape((s) => fleet(s));
    const off = scrape((s) => fleet(s), { perfdata: false });
    expect(off.filter(isPerf)).toEqual([]);
    expect(find(off, 'noshell_check_perfdata_label_sets_limit').length).toBe(1);
    expect(canonical(off)).toEqual(canonical(all.filter((s) => !isPerf(s))));
  });

  it('an allow-list of checks (names, prefix*) and labels keeps only those perfdata series', () => {
    const all = scrape((s) => fleet(s));
    const some = scrape((s) => fleet(s), { perfdata: { checks: ['web-*', 'mail'], labels: ['rt*', 'pl'] } });
    const kept = (s: ParsedSample) => !isPerf(s) || (['web-1', 'web-2', 'mail'].includes(s.labels.check)
      && (s.labels.label === undefined || ['rta', 'rtmax', 'rtmin', 'pl'].includes(s.labels.label)));
    expect(canonical(some)).toEqual(canonical(all.filter(kept)));
    expect(find(some, 'noshell_check_perfdata', { check: 'db-1' })).toEqual([]);
    expect(find(some, 'noshell_check_perfdata', { check: 'web-1', label: 'used' })).toEqual([]);
    expect(find(some, 'noshell_check_perfdata', { check: 'web-1', label: 'rta' }).length).toBe(1);
    // Checks only: every label of those checks.
    const checksOnly = scrape((s) => fleet(s), { perfdata: { checks: ['db-1'] } });
    expect(new Set(find(checksOnly, 'noshell_check_perfdata').map((s) => s.labels.check))).toEqual(new Set(['db-1']));
    expect(find(checksOnly, 'noshell_check_perfdata').length).toBe(5);
  });

  it('a check with metrics: false has no series, { perfdata: false } only its noshell_check_* ones; the others are unchanged', () => {
    const all = scrape((s) => fleet(s));
    const got = scrape((s) => fleet(s, { 'db-1': false, mail: { perfdata: false } }));
    const kept = (s: ParsedSample) => s.labels.check !== 'db-1' && !(s.labels.check === 'mail' && isPerf(s));
    expect(canonical(got.filter(perCheck))).toEqual(canonical(all.filter(perCheck).filter(kept)));
    expect(got.filter((s) => s.labels.check === 'db-1')).toEqual([]);
    expect(find(got, 'noshell_check_state', { check: 'mail' }).length).toBe(1);
    // The aggregate series still count every check.
    expect(canonical(got.filter((s) => !perCheck(s)))).toEqual(canonical(all.filter((s) => !perCheck(s))));
  });

  it('a prom-client registry exposes the same samples as runner.metrics() under the options', async () => {
    const s = new FakeSource();
    fleet(s, { 'db-1': false });
    const registry = new Registry();
    registerRunnerMetrics(s, registry, { perfdata: { checks: ['web-*'], labels: ['pl'] } });
    const noRate = (t: string) => canonical(parseExposition(t)).filter((l) => !l.startsWith('noshell_checks_per_second'));
    const text = formatMetrics(s);
    expect(noRate(await registry.metrics())).toEqual(noRate(text));
    expect(find(parseExposition(text), 'noshell_check_perfdata').map((x) => `${x.labels.check} ${x.labels.label}`).sort()).toEqual(['web-1 pl', 'web-2 pl']);
  });

  it('changing the options re-renders every check', () => {
    const s = new FakeSource();
    fleet(s);
    const before = formatMetrics(s);
    configureRunnerMetrics(s, { perfdata: false });
    expect(parseExposition(formatMetrics(s)).filter(isPerf)).toEqual([]);
    configureRunnerMetrics(s, { perfdata: true });
    expect(formatMetrics(s)).toBe(before);
  });

  it('bad options are TypeErrors that say what is expected', () => {
    const s = new FakeSource();
    expect(() => configureRunnerMetrics(s, { perfdata: 'no' as unknown as boolean })).toThrow(/perfdata must be true, false or \{ checks\?, labels\? \}/);
    expect(() => configureRunnerMetrics(s, { perfdata: { checks: [''] } })).toThrow(/perfdata.checks must be an array of non-empty strings/);
    expect(() => configureRunnerMetrics(s, { perfdata: { labels: 'rta' as unknown as string[] } })).toThrow(TypeError);
    expect(() => configureRunnerMetrics(s, { perfdata: { check: ['a'] } as unknown as boolean })).toThrow(/unknown field "check"/);
    expect(() => registerRunnerMetrics(s, new Registry(), { perfdata: { checks: [1 as unknown as string] } })).toThrow(TypeError);
    const runner = new CheckRunner();
    expect(() => runner.add({ id: 'x', command: ['/bin/true'], interval: 1000, metrics: 'off' as unknown as false })).toThrow(/metrics of x must be true, false or \{ perfdata: boolean \}/);
    expect(() => runner.add({ id: 'y', command: ['/bin/true'], interval: 1000, metrics: { perfdata: 1 } as unknown as false })).toThrow(TypeError);
    runner.add({ id: 'z', command: ['/bin/true'], interval: 1000, metrics: { perfdata: false } });
    expect(runner.metrics()).toContain('noshell_check_interval_seconds{check="z"} 1');
  });

  it('checks files take metrics per check and in defaults; a bad value names the field', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-metrics-options-'));
    try {
      const file = path.join(dir, 'checks.json');
      writeFileSync(file, JSON.stringify({
        defaults: { interval: '1m', metrics: { perfdata: false } },
        checks: [{ id: 'a', command: '/bin/true' }, { id: 'b', command: '/bin/true', metrics: true }, { id: 'c', command: '/bin/true', metrics: false }],
      }));
      const defs = loadChecksFile(file).checks.map((c) => c.definition);
      expect(defs.map((d) => [d.id, d.metrics])).toEqual([['a', { perfdata: false }], ['b', true], ['c', false]]);
      writeFileSync(file, JSON.stringify({ checks: [{ id: 'a', command: '/bin/true', interval: 1000, metrics: { perfdata: 'no' } }] }));
      expect(() => loadChecksFile(file)).toThrow(/checks\[0\] \(id "a"\): field "metrics": expected true, false or \{ "perfdata": false \}, got \{"perfdata":"no"\}/);
      // The file's own "metrics": runner-wide options, as configureRunnerMetrics takes them.
      const one = [{ id: 'a', command: '/bin/true', interval: 1000 }];
      const runnerWide = { perfdata: { checks: ['web-*'], labels: ['rta'] }, perfdataLimit: 20, perfdataLabelMaxBytes: 64 };
      writeFileSync(file, JSON.stringify({ metrics: runnerWide, checks: one }));
      expect(loadChecksFile(file).metrics).toEqual(runnerWide);
      writeFileSync(file, JSON.stringify({ checks: one }));
      expect(loadChecksFile(file).metrics).toEqual({});
      for (const [bad, why] of [
        [{ perfdata: 'some' }, /the file: field "metrics.perfdata": expected true, false or \{ "checks": \[...\], "labels": \[...\] \}, got "some"/],
        // A field path with an index is quoted whole, not cut as an odd name.
        [{ perfdata: { checks: [''] } }, /the file: field "metrics.perfdata.checks\[0\]": expected an array of check ids or labels/],
        [{ perfdataLimit: -1 }, /the file: field "metrics.perfdataLimit": expected a whole number >= 0, got -1/],
        [{ perfdataLabelMaxBytes: 0 }, /the file: field "metrics.perfdataLabelMaxBytes": expected a whole number >= 1, got 0/],
        [{ perfdta: false }, /the file: unknown field "metrics.perfdta"/],
      ] as const) {
        writeFileSync(file, JSON.stringify({ metrics: bad, checks: one }));
        expect(() => loadChecksFile(file)).toThrow(why);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
