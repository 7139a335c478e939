// `noshell bench --scale` (issue 19), smoke-sized: a real `noshell run` of
// 200 generated checks, scraped, reloaded twice; the tables must hold numbers
// for every column, the reloads the edits they were given, and no noshell run
// may be left (each one's pid is on stderr).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { editChecks, initialChecks } from '../../src/bench/scale/scale-checks';
import { reloadCounts } from '../../src/bench/scale/scale-figures';
import { hasTick } from '../../src/bench/scale/scale-process';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const CHECK_DUMMY = '/usr/lib/nagios/plugins/check_dummy';

function cells(row: string): string[] {
  return row.split('|').slice(1, -1).map((c) => c.trim());
}

/** Every number in a cell like "0.785 / 177 / 223", "85 (85)" or "19.7 (own 19.1)". */
function numbers(cell: string): number[] {
  return cell.split(/[ /()]+/).filter((x) => x !== '' && x !== 'own').map(Number);
}

/** A block cell: the block, and its own part where this kernel keeps scheduler figures (it must then be there). */
function expectBlock(cell: string): void {
  const [block, own, ...more] = numbers(cell);
  expect(more, cell).toEqual([]);
  expect(Number.isFinite(block), cell).toBe(true);
  if (!existsSync('/proc/thread-self/schedstat')) return;
  expect(cell, cell).toContain('(own ');
  expect(own, cell).toBeGreaterThanOrEqual(0);
  expect(own, cell).toBeLessThanOrEqual(block);
}

describe('the noshell run the scale bench starts', () => {
  it('gets --tick 0 from a build that takes it (latency is then what scrapes and reloads add), nothing from one that does not', () => {
    expect(hasTick(CLI)).toBe(true);
    expect(hasTick(path.join(os.tmpdir(), 'no-such-build', 'cli.js'))).toBe(false);
    // A build from before --tick: its help has no such option.
    const old = mkdtempSync(path.join(os.tmpdir(), 'noshell-old-build-'));
    try {
      mkdirSync(path.join(old, 'cli'));
      writeFileSync(path.join(old, 'cli', 'help.js'), "['--concurrency N', 'checks running at once']");
      expect(hasTick(path.join(old, 'cli.js'))).toBe(false);
    } finally {
      rmSync(old, { recursive: true, force: true });
    }
  });
});

describe('editChecks', () => {
  it('edits the share it is given: a tenth removed, as many added, the rest changed', () => {
    const { checks, edit } = editChecks(initialChecks(1000), 0.1, 'r1');
    expect(edit).toEqual({ added: 10, removed: 10, changed: 80 });
    expect(checks).toHaveLength(1000);
    expect(checks.filter((c) => c.version === 1)).toHaveLength(80);
    expect(checks.filter((c) => c.id.startsWith('r1-'))).toHaveLength(10);
    expect(new Set(checks.map((c) => c.id)).size).toBe(1000);
  });

  it('reads the counts of a reload line, ids with digits or not', () => {
    expect(reloadCounts('noshell run: reloaded /tmp/x1/checks.json: 2 added ("r1-0", "r1-1"), 2 removed ("c010", "c110"), ' +
      '16 changed ("c000", …), 180 unchanged')).toEqual({ added: 2, removed: 2, changed: 16 });
    expect(reloadCounts('noshell run: reload of f failed')).toBeNull();
  });
});

describe.skipIf(!existsSync(CHECK_DUMMY))('noshell bench --scale', () => {
  it('measures 200 checks end to end: numbers in every column, the reloads counted, no process left', () => {
    // Both rates given: no calibration, so the test stays short.
    const r = spawnSync(process.execPath, [CLI, 'bench', '--scale', '--sizes', '200', '--seconds', '5', '--rate', '300', '--fill-rate', '800'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const header = r.stdout.split('\n')[0];
    expect(header).toContain('capacity not measured (--rate and --fill-rate both given)');
    expect(header).toContain('offering 300 checks/s (given) in all');
    expect(header).toContain('then a run at 800 checks/s (given) until every check has reported');
    expect(r.stdout).toContain('| checks (all run at 800/s) |');
    const rows = r.stdout.split('\n').filter((l) => l.startsWith('| 200 |'));
    expect(rows, r.stdout).toHaveLength(4);
    const [main, ...rest] = rows.map(cells);
    const reloads = rest.slice(0, 2);
    const full = rest[2];
    expect(main).toHaveLength(13);
    const [, interval, start, rss, rssPerCheck, heap, , scrapeS, scrapeMiB, scrapeBlock, otherBlock, latency, results] = main;
    // 200 checks offering 300 checks/s: each every 0.67 s.
    expect(Number(interval)).toBeCloseTo(0.7, 5);
    for (const cell of [start, rss, rssPerCheck, heap, scrapeS, scrapeMiB, scrapeBlock, otherBlock, latency]) {
      expect(numbers(cell).length, cell).toBeGreaterThan(0);
      for (const x of numbers(cell)) expect(Number.isFinite(x), cell).toBe(true);
    }
    expect(Number(start)).toBeGreaterThan(0);
    expect(numbers(rss)[0]).toBeGreaterThan(20);
    expect(numbers(scrapeS)[0]).toBeGreaterThan(0);
    expect(Number(scrapeMiB)).toBeGreaterThan(0);
    const [p50, p99, max] = numbers(latency);
    expect(p50).toBeLessThanOrEqual(p99);
    expect(p99).toBeLessThanOrEqual(max);
    // ~300 results/s for 5 s; a loaded machine gets fewer through.
    expect(Number(results)).toBeGreaterThan(200);
    expectBlock(scrapeBlock);

    expect(reloads.map((c) => [c[1], c[2]])).toEqual([['1 %', '0 / 0 / 2'], ['10 %', '2 / 2 / 16']]);
    for (const c of reloads) {
      expect(c, c.join(' | ')).toHaveLength(8);
      expect(Number(c[3]), c.join(' | ')).toBeGreaterThan(0);
      expect(Number.isFinite(Number(c[4])), c.join(' | ')).toBe(true);
      // CPU of noshell run and of the checks it ran, over the reload: ticks of 10 ms, so 0 is possible for a short one.
      const cpu = c[7].split(' / ').map(Number);
      expect(cpu, c[7]).toHaveLength(2);
      for (const x of cpu) expect(x, c[7]).toBeGreaterThanOrEqual(0);
    }

    // Every check reported (200 at 800/s: within a second or so), memory and three scrapes then.
    expect(full, full.join(' | ')).toHaveLength(9);
    const [, reportedAfter, fullRss, fullHeap, , fullScrapes, fullMiB, fullBlock, loopThread] = full;
    expect(reportedAfter).not.toContain('only');
    expect(Number(reportedAfter)).toBeGreaterThan(0);
    expect(numbers(fullRss)[0]).toBeGreaterThan(20);
    expect(Number(fullHeap)).toBeGreaterThan(0);
    expect(numbers(fullScrapes)).toHaveLength(3);
    // Every check has its perfdata series now: more text than the main phase's scrape, which had some without.
    expect(Number(fullMiB)).toBeGreaterThanOrEqual(Number(scrapeMiB));
    expectBlock(fullBlock);
    // The event-loop thread's CPU and run-queue wait over the scrapes, where this kernel keeps them (it does for this process too).
    if (existsSync(`/proc/self/task/${process.pid}/schedstat`)) {
      const [cpu, wait] = loopThread.split(' / ').map(Number);
      expect(cpu, loopThread).toBeGreaterThanOrEqual(0);
      expect(wait, loopThread).toBeGreaterThanOrEqual(0);
    } else {
      expect(loopThread).toBe('-');
    }

    // The baseline run, the measured one and the filled one, each gone.
    const spawned = [...r.stderr.matchAll(/noshell run pid (\d+) \(\d+ checks? in (\S+)\)/g)];
    expect(spawned, r.stderr).toHaveLength(3);
    for (const [, pid, dir] of spawned) {
      const cmdline = existsSync(`/proc/${pid}`) ? readFileSync(`/proc/${pid}/cmdline`, 'utf8') : '';
      expect(cmdline, `pid ${pid}`).not.toContain(dir);
      expect(existsSync(dir), dir).toBe(false);
    }
  }, 60_000);
});
