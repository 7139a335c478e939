// End to end: Nagios 4 with the Mod-Gearman broker module (test/peers/nagios-lab.sh)
// puts its checks on a real gearmand; noshell's worker runs them; the results land in
// Nagios' status.dat.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GearmanWorker } from '../../src/gearman/worker/worker';
import { GEARMAND, Gearmand, peers, waitUntil } from '../fixtures/gearman/harness';

const LAB = process.env.NOSHELL_NAGIOS_LAB || path.resolve(__dirname, '..', 'peers', 'nagios-lab.sh');
const why = GEARMAND === null ? 'gearmand is not installed'
  : !existsSync(LAB) ? `${LAB} not found`
  : process.getuid?.() !== 0 ? 'Nagios runs as the nagios user: needs root'
  : peers().error ?? (existsSync('/usr/sbin/nagios4') ? null : '/usr/sbin/nagios4 missing (nagios4-core)');
if (why !== null) {
  if (process.env.NOSHELL_REQUIRE_PEERS) throw new Error(`Nagios end-to-end test required here: ${why}`);
  console.warn(`skipped: Nagios 4 end-to-end test: ${why}`);
}

/** servicestatus / hoststatus blocks of status.dat. */
function status(file: string): Array<Record<string, string>> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: Array<Record<string, string>> = [];
  let block: Record<string, string> | null = null;
  for (const line of text.split('\n')) {
    if (block === null) {
      if (line === 'servicestatus {' || line === 'hoststatus {') block = { kind: line.slice(0, -2) };
    } else if (line.trim() === '}') {
      out.push(block);
      block = null;
    } else {
      const eq = line.indexOf('=');
      if (eq > 0) block[line.slice(0, eq).trim()] = line.slice(eq + 1);
    }
  }
  return out;
}

describe.skipIf(why !== null)('Nagios 4 + broker module + noshell gearman worker', () => {
  let g: Gearmand;
  let worker: GearmanWorker;
  // Made in beforeAll: a run whose -t filter skips this block runs neither hook, and a directory made at collection was left behind.
  let root = '';
  let dir = '';
  const KEY = 'nagioslab12';

  beforeAll(async () => {
    root = mkdtempSync('/tmp/noshell-nagios-');
    dir = path.join(root, 'lab');
    chmodSync(root, 0o755);
    g = await Gearmand.start();
    // The broker module peers() found, so that the lab does not build its own; stderr in the error if it fails.
    const env = { ...process.env, CHECK_INTERVAL: '2', MG_NEB_NAGIOS4: peers().env?.MG_NEB_NAGIOS4 ?? '' };
    execFileSync(LAB, ['up', dir, String(g.port), KEY], { env, stdio: ['ignore', 'ignore', 'pipe'], timeout: 120_000 });
    worker = new GearmanWorker({ servers: [g.address], key: KEY, identifier: 'nsw', maxWorker: 8 }).start();
  }, 150_000);
  afterAll(async () => {
    await worker?.stop({ deadlineMs: 2000 });
    execFileSync(LAB, ['down', dir], { stdio: 'ignore' });
    await g?.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  it('every check result reaches Nagios with the right state, output, long output and perfdata', async () => {
    const file = path.join(dir, 'var', 'status.dat');
    const want: Record<string, { state: string; output: string }> = {
      svc_ok: { state: '0', output: 'OK: all fine' },
      svc_warn: { state: '1', output: 'WARNING: somewhat bad' },
      svc_crit: { state: '2', output: 'CRITICAL: very bad' },
      svc_multiline: { state: '1', output: 'first line C:\\temp' },
      svc_timeout: { state: '2', output: '(Service Check Timed Out On Worker: nsw)' },
    };
    const services = () => new Map(status(file).filter((s) => s.kind === 'servicestatus').map((s) => [s.service_description, s]));
    await waitUntil(() => {
      const s = services();
      return Object.entries(want).every(([name, w]) => s.get(name)?.current_state === w.state && s.get(name)?.plugin_output === w.output);
    }, 25_000, 'Nagios to show every service result from the noshell worker');
    const multi = services().get('svc_multiline')!;
    expect(multi.long_plugin_output).toBe('second line with a \\\\ backslash\\nthird line');
    expect(multi.performance_data).toBe('time=0.01s;1;2;0 size=12B extra=1;;;0;10');
    const host = status(file).find((s) => s.kind === 'hoststatus')!;
    expect(host).toMatchObject({ current_state: '0', plugin_output: 'OK: host is up' });
    await waitUntil(() => existsSync(path.join(dir, 'eventhandler.out')), 10_000, 'the event handler');
    expect(readFileSync(path.join(dir, 'eventhandler.out'), 'utf8')).toMatch(/^svc_crit CRITICAL/m);
    const m = worker.metrics();
    expect(m).toMatch(/noshell_gearman_jobs_total\{queue="eventhandler",result="no_result"\} [1-9]/);
    expect(m).not.toMatch(/result="(failed|discarded)"/);
  }, 40_000);
});
