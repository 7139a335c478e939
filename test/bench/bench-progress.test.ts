// Progress of `noshell bench` on stderr (src/bench/progress.ts): one line
// rewritten in place on a terminal, one plain line per table elsewhere, and
// never a control sequence on a stream that is not a terminal.
import { describe, expect, it } from 'vitest';
import { formatDuration, Progress } from '../../src/bench/progress';

function sink(isTTY: boolean, columns = 100) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns, write: (s: string) => writes.push(s) } };
}

function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

// eslint-disable-next-line no-control-regex -- looking for exactly those
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f]/;

function run(p: Progress, c: ReturnType<typeof clock>) {
  for (let t = 1; t <= 2; t++) {
    p.beginGroup(`workload ${t}`);
    for (let u = 1; u <= 3; u++) {
      p.step(`round 1/1 driver ${u}`);
      c.advance(1000);
      p.unitDone();
    }
    p.endGroup();
    p.around(() => {});
  }
  p.end();
  p.note('wrote results.md');
}

describe('bench progress', () => {
  it('off a terminal: one plain line per table with its time and what is left, no control characters', () => {
    const s = sink(false);
    const c = clock();
    run(new Progress({ name: 'bench', groupName: 'table', groups: 2, units: 6, stream: s.stream, now: c.now }), c);
    expect(s.writes).toEqual([
      'bench: table 1/2 workload 1: done in 3 s, about 3 s left\n',
      'bench: table 2/2 workload 2: done in 3 s\n',
      'bench: wrote results.md\n',
    ]);
    for (const w of s.writes) expect(w.replace(/\n$/, '')).not.toMatch(CONTROL);
  });

  it('on a terminal: rewrites one line with table, round, driver and ETA, clears it for output, ends clean', () => {
    const s = sink(true);
    const c = clock();
    run(new Progress({ name: 'bench', groupName: 'table', groups: 2, units: 6, stream: s.stream, now: c.now, env: {} }), c);
    const all = s.writes.join('');
    expect(all).toContain('\rbench: table 1/2 workload 1 · round 1/1 driver 2 · ');
    // After 1 of 6 units took 1 s: 5 s to go.
    expect(all).toContain('1 s elapsed, ETA 5 s');
    expect(all).toContain('table 2/2 workload 2 · round 1/1 driver 3');
    expect(all).not.toContain('\n\r');
    // The note comes after the line was erased, on a line of its own.
    expect(all.endsWith('\r\x1b[Kbench: wrote results.md\n')).toBe(true);
    expect(all).toContain('\x1b[2m'); // the ETA dimmed
  });

  it('respects NO_COLOR and TERM=dumb', () => {
    const a = sink(true);
    const c = clock();
    run(new Progress({ name: 'bench', groupName: 'table', groups: 2, units: 6, stream: a.stream, now: c.now, env: { NO_COLOR: '1' } }), c);
    expect(a.writes.join('')).not.toContain('\x1b[2m');
    expect(a.writes.join('')).toContain('\x1b[K'); // still a terminal
    const d = sink(true);
    run(new Progress({ name: 'bench', groupName: 'table', groups: 2, units: 6, stream: d.stream, now: c.now, env: { TERM: 'dumb' } }), c);
    for (const w of d.writes) expect(w.replace(/\n$/, '')).not.toMatch(CONTROL);
  });

  it('never draws a line wider than the terminal', () => {
    const s = sink(true, 40);
    const c = clock();
    const p = new Progress({ name: 'bench', groupName: 'table', groups: 9, units: 9, stream: s.stream, now: c.now, env: { NO_COLOR: '1' } });
    p.beginGroup('check_load | concurrency 1 | heap small');
    p.step('round 3/3 noshell.execFile[posix_spawn]');
    const line = s.writes.at(-1)!.replace('\r', '').replace('\x1b[K', '');
    expect([...line].length).toBeLessThan(40);
    expect(line.startsWith('bench: table 1/9 ')).toBe(true);
    expect(line.endsWith('… · 0 s elapsed, ETA …')).toBe(true);
  });

  it('formats durations', () => {
    expect(formatDuration(14_400)).toBe('14 s');
    expect(formatDuration(185_000)).toBe('3 min 05 s');
    expect(formatDuration(3_725_000)).toBe('1 h 02 min');
  });
});
