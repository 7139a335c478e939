// A stand-in for CheckRunner in the metrics suites: the checks, results and
// running flags a test sets, read the way metrics read a runner (stats() and
// checkStatus()), without running anything.
import type { CheckFigures, CheckStatus } from '../../src/check/model/check-status';
import type { CheckDefinition, CheckRunResult, RunnerStats } from '../../src/check/model/definition';
import { checkDefinitionOf, checkFiguresList, eachCheckFigures, type FiguresList } from '../../src/check/model/figures-list';
import type { PerfDatum } from '../../src/check/plugin/perfdata';
import { CheckRunner } from '../../src/index';

const STATS: RunnerStats = new CheckRunner().stats();

export class FakeSource {
  readonly checks = new Map<string, CheckStatus>();
  #finished = 1_796_000_000_000;
  /** What CheckRunner has: a result is a new object, never changed (scrapes then read only what changed, scrape-cache.ts). */
  [eachCheckFigures]?: () => Iterable<CheckFigures>;
  [checkDefinitionOf]?: (id: string) => object | undefined;
  [checkFiguresList]?: () => FiguresList;

  /**
   * `kept`: read as a CheckRunner is, by its kept records, and as its list:
   * every check read into one object, overwritten by the next read (what a
   * scrape keeps of one must be a copy).
   */
  constructor(kept = false) {
    if (kept) {
      this[eachCheckFigures] = () => this.checkStatus();
      this[checkDefinitionOf] = (id) => this.checks.get(id)?.definition;
      this[checkFiguresList] = () => {
        const list = this.checkStatus();
        const shared = { ...list[0] } as CheckFigures;
        return { length: list.length, read: (i) => Object.assign(shared, list[i]) };
      };
    }
  }

  stats(): RunnerStats {
    return STATS;
  }

  checkStatus(): CheckStatus[] {
    return [...this.checks.values()].map((c) => ({ ...c }));
  }

  /** Adds (or replaces: a new definition object) a check. */
  define(id: string, extra: Partial<CheckDefinition> = {}): void {
    const prev = this.checks.get(id);
    const definition = { id, command: ['/bin/true'], interval: 60_000, maxAttempts: 1, ...extra };
    this.checks.set(id, { id, definition, running: prev?.running ?? false, last: null, lastStateChangeAt: null });
  }

  remove(id: string): void {
    this.checks.delete(id);
  }

  setRunning(id: string, running: boolean): void {
    const c = this.checks.get(id);
    if (c !== undefined) c.running = running;
  }

  /** A new last result for the check. */
  result(id: string, state: 0 | 1 | 2 | 3, perfdata: PerfDatum[]): void {
    const c = this.checks.get(id);
    if (c === undefined) return;
    const finishedAt = (this.#finished += 1234.5);
    const last = {
      id, state, stateName: ['OK', 'WARNING', 'CRITICAL', 'UNKNOWN'][state], output: 'x', longOutput: '', perfdata, perfdataErrors: [],
      exitCode: state, signal: null, timedOut: false, truncated: false, durationMs: 12.25, rusage: { userCpuMs: 0, systemCpuMs: 0, maxRssKb: 0 },
      stdout: '', stderr: '', command: '/bin/true', viaShell: false, spawnError: null, attempt: 1, maxAttempts: 1,
      stateType: 'HARD', scheduledAt: finishedAt - 20, startedAt: finishedAt - 12.25, finishedAt, latencyMs: 7.75,
    } as CheckRunResult;
    if (c.last === null || c.last.state !== state) c.lastStateChangeAt = finishedAt;
    c.last = last;
  }
}

/** Five perfdata items, as check_ping-like plugins print them. */
export function fivePerfdata(seed: number): PerfDatum[] {
  const range = (end: number) => ({ start: 0, end, alertInside: false });
  return [
    { label: 'rta', value: 0.1 + seed / 1000, uom: 'ms', warn: range(100), crit: range(500), min: 0 },
    { label: 'pl', value: seed % 3, uom: '%', warn: range(20), crit: range(60), min: 0, max: 100 },
    { label: 'rtmax', value: 0.5, uom: 'ms' },
    { label: 'rtmin', value: 0.05, uom: 'ms' },
    { label: 'used', value: 1024 + seed, uom: 'KB', min: 0, max: 1e6 },
  ];
}

/** A source of `n` checks with a result of five perfdata items each. */
export function bigSource(n: number, kept = false): FakeSource {
  const s = new FakeSource(kept);
  for (let i = 0; i < n; i++) {
    const id = `host-${i}/ping`;
    s.define(id);
    s.result(id, (i % 4) as 0 | 1 | 2 | 3, fivePerfdata(i));
  }
  return s;
}
