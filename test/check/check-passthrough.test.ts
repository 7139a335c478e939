// Issue 20: `noshell check` passes the plugin's text through as the plugin
// wrote it, as Nagios does — perfdata it cannot parse (`b=bad`), numbers as
// spelled (`1.50`), spacing, long output — with the state from the exit
// code. Twenty real outputs of Debian's plugins are captured first, then
// replayed byte for byte through `noshell check` (a replay is deterministic;
// load averages and process counts change between two live runs).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const P = '/usr/lib/nagios/plugins';
const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const havePlugins = existsSync(`${P}/check_dummy`);
if (!havePlugins) {
  if (process.env.NOSHELL_REQUIRE_PEERS) throw new Error('monitoring-plugins-basic is required here');
  console.warn('skipped: check pass-through: monitoring-plugins-basic is not installed');
}

let tmp: string;
let closedPort: number;
const replay = () => path.join(tmp, 'replay.js');

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-passthrough-'));
  // Prints a file and exits with the given code: a recorded plugin run.
  writeFileSync(replay(), "process.stdout.write(require('fs').readFileSync(process.argv[2])); process.exitCode = Number(process.argv[3]);\n");
  // A loopback port nothing listens on (bound, then closed).
  closedPort = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function plugins(): Array<[string, string[]]> {
  return [
    ['check_dummy', ['0', 'all fine']],
    ['check_dummy', ['1', 'somewhat bad | a=1.50;;;0 b=bad c=12%;80;90;0;100']],
    ['check_dummy', ['2', "very bad | 'quoted label'=3s;1:2;@5:10 x=U"]],
    ['check_dummy', ['3', '  spaced   out  |  t=0.000100s  ']],
    ['check_dummy', ['1', 'first line | p=1\nlong output 1\nlong output 2 | q=2;;;\nr=3']],
    ['check_dummy', ['0', 'C:\\new\\path and a tab\there | n=-0 e=1e3 big=123456789012345678901234567890']],
    ['check_dummy', ['2', 'ünïcödé – ✓ | ü=1 é=2MB']],
    ['check_load', ['-w', '5,4,3', '-c', '10,8,6']],
    ['check_load', ['-r', '-w', '0.01,0.01,0.01', '-c', '100,100,100']],
    ['check_disk', ['-w', '10%', '-c', '5%', '-p', '/']],
    ['check_disk', ['-w', '99%', '-c', '98%', '-p', '/', '-p', '/tmp']],
    ['check_procs', ['-w', '500', '-c', '1000']],
    ['check_procs', ['-s', 'Z', '-w', '~:5', '-c', '~:20']],
    ['check_users', ['-w', '20', '-c', '50']],
    ['check_swap', ['-w', '20%', '-c', '10%']],
    ['check_tcp', ['-H', '127.0.0.1', '-p', String(closedPort), '-t', '5']],
    ['check_http', ['-H', '127.0.0.1', '-p', String(closedPort), '-t', '5']],
    ['check_ssh', ['-H', '127.0.0.1', '-p', String(closedPort), '-t', '5']],
    ['check_file_age', ['-f', '/etc/hostname', '-w', '1', '-c', '2']],
    ['negate', [`${P}/check_dummy`, '0', 'negated | v=7']],
  ];
}

describe.runIf(havePlugins)('noshell check passes plugin output through', () => {
  it('twenty real plugin outputs: the same bytes on stdout and the same exit code', () => {
    const list = plugins();
    expect(list).toHaveLength(20);
    const states = new Set<number>();
    list.forEach(([name, args], i) => {
      const real = spawnSync(`${P}/${name}`, args, { timeout: 30_000 });
      expect(real.error, name).toBeUndefined();
      const code = real.status!;
      expect([0, 1, 2, 3], `${name} ${args.join(' ')}: exit ${code}`).toContain(code);
      states.add(code);
      const file = path.join(tmp, `out-${i}`);
      writeFileSync(file, real.stdout);
      const via = spawnSync(process.execPath, [CLI, 'check', '--', process.execPath, replay(), file, String(code)], { timeout: 30_000 });
      const label = `${name} ${args.join(' ')} -> ${JSON.stringify(real.stdout.toString())}`;
      expect(via.status, label).toBe(code);
      // Plugins end their text with a newline; one that does not gets one.
      const expected = real.stdout.toString().endsWith('\n') ? real.stdout : Buffer.concat([real.stdout, Buffer.from('\n')]);
      expect(via.stdout.equals(expected), `${label}\ngot ${JSON.stringify(via.stdout.toString())}`).toBe(true);
    });
    // The set covers every state, so the exit code is really followed.
    expect([...states].sort()).toEqual([0, 1, 2, 3]);
  }, 180_000);

  it('a live plugin: the text verbatim, the unparsed perfdata item kept; --format json has it parsed', () => {
    const args = ['1', 'disk | a=1.50;;;0 b=bad'];
    const text = spawnSync(process.execPath, [CLI, 'check', '--', `${P}/check_dummy`, ...args], { encoding: 'utf8' });
    expect(text.status).toBe(1);
    expect(text.stdout).toBe('WARNING: disk | a=1.50;;;0 b=bad\n');
    const json = spawnSync(process.execPath, [CLI, 'check', '--format', 'json', '--', `${P}/check_dummy`, ...args], { encoding: 'utf8' });
    expect(json.status).toBe(1);
    const r = JSON.parse(json.stdout);
    expect(r).toMatchObject({ state: 1, stateName: 'WARNING', output: 'WARNING: disk', stdout: 'WARNING: disk | a=1.50;;;0 b=bad\n' });
    expect(r.perfdata).toEqual([{ label: 'a', value: 1.5, uom: '', min: 0 }]);
    expect(r.perfdataErrors.join('\n')).toContain('skipped "b"');
  });

  it("noshell's own words keep the state in front: a timeout, an out-of-range exit, a bad option", () => {
    const timeout = spawnSync(process.execPath, [CLI, 'check', '--timeout', '0.3', '--', '/bin/sleep', '5'], { encoding: 'utf8' });
    expect(timeout.stdout).toBe('UNKNOWN - Check timed out after 0.3 s\n');
    const odd = spawnSync(process.execPath, [CLI, 'check', '--', process.execPath, '-e', 'console.log("text"); process.exitCode = 7'], { encoding: 'utf8' });
    expect(odd.status).toBe(3);
    expect(odd.stdout).toMatch(/^UNKNOWN - Plugin .* exited with out-of-range code 7: text\n$/);
    const bad = spawnSync(process.execPath, [CLI, 'check', '--format', 'xml', '--', `${P}/check_dummy`, '0'], { encoding: 'utf8' });
    expect(bad.status).toBe(3);
    expect(bad.stdout).toBe('UNKNOWN - noshell check: --format must be text or json, got "xml"\n');
  });
});
