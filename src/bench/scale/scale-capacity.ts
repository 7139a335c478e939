// The calibration of `noshell bench --scale` (issue 19): how many of its
// checks this machine runs in a second, noshell's own work included. A real
// `noshell run` (the build being measured) of 2,000 checks due every second
// offers far more than 2 cores run, so it runs at saturation: its results
// over a few seconds, after a warm-up, are the capacity. The phases then
// offer a share of it, so that they measure noshell and not CPU starvation.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { initialChecks, writeChecksFile } from './scale-checks';
import { ScaleProcess } from './scale-process';

export const CALIBRATION_CHECKS = 2000;
export const CALIBRATION_INTERVAL_MS = 1000;
export const CALIBRATION_WARMUP_MS = 2000;
export const CALIBRATION_COUNT_MS = 5000;
/** Below this many results/s the machine cannot run a bench worth reading. */
export const MIN_CAPACITY = 20;
const START_TIMEOUT_MS = 60_000;

export interface Capacity {
  /** Result lines per second at saturation. */
  resultsPerSec: number;
  checks: number;
  intervalMs: number;
  /** The time the results were counted over, ms (after the warm-up). */
  countedMs: number;
  results: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `cli`'s `noshell run` at saturation and counts its result lines.
 * Throws when it fails or runs fewer than MIN_CAPACITY checks/s.
 */
export async function measureCapacity(
  cli: string, windowMs: number, spawned: (pid: number, checks: number, dir: string) => void,
): Promise<Capacity> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-bench-scale-'));
  const file = path.join(dir, 'checks.json');
  writeChecksFile(file, initialChecks(CALIBRATION_CHECKS), CALIBRATION_INTERVAL_MS);
  const p = new ScaleProcess(cli, file, windowMs);
  spawned(p.pid, CALIBRATION_CHECKS, dir);
  let capacity: Capacity;
  try {
    await p.waitLine((l) => l.includes(' checks from ') || l.includes(' check from '), START_TIMEOUT_MS, 'start');
    await sleep(CALIBRATION_WARMUP_MS);
    const from = Date.now();
    const before = p.results.length;
    await sleep(CALIBRATION_COUNT_MS);
    const countedMs = Date.now() - from;
    const results = p.results.length - before;
    // Exited meanwhile (crashed, killed): its count says nothing about the machine.
    if (p.child.exitCode !== null || p.child.signalCode !== null) {
      throw new Error(`noshell run exited (${p.child.exitCode ?? p.child.signalCode}):\n${p.lines.slice(-5).map((l) => l.text).join('\n')}`);
    }
    capacity = {
      resultsPerSec: (results * 1000) / countedMs, checks: CALIBRATION_CHECKS, intervalMs: CALIBRATION_INTERVAL_MS, countedMs, results,
    };
  } catch (e) {
    throw new Error(`noshell bench --scale: the calibration failed: ${(e as Error).message.replace('noshell bench --scale: ', '')}`, { cause: e });
  } finally {
    await p.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  if (!(capacity.resultsPerSec >= MIN_CAPACITY)) {
    throw new Error(`noshell bench --scale: the calibration ran ${capacity.results} checks in ${(capacity.countedMs / 1000).toFixed(1)} s ` +
      `(${capacity.resultsPerSec.toFixed(1)}/s, fewer than ${MIN_CAPACITY}/s): this machine is too busy or too slow for the bench ` +
      '(give --rate and --fill-rate to run it anyway)');
  }
  return capacity;
}
