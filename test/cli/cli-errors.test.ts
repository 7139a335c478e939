// Issue 20: a metrics port that cannot be had is one line naming the address
// and the reason, exit 2 — not a stack trace — and nothing was started.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
// Tests run as root in CI: both commands refuse that unless told.
const allowRootArgs = () => (process.getuid?.() === 0 ? ['--allow-root'] : []);
let tmp: string;
let busy: net.Server;
let port: number;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-cli-errors-'));
  busy = net.createServer();
  port = await new Promise<number>((resolve) => busy.listen(0, '127.0.0.1', () => resolve((busy.address() as net.AddressInfo).port)));
});
afterAll(async () => {
  await new Promise((r) => busy.close(r));
  rmSync(tmp, { recursive: true, force: true });
});

function run(args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000 });
}

describe('a metrics port in use', () => {
  it('noshell run: exit 2, which address and why, no stack, no check run', () => {
    const file = path.join(tmp, 'checks.json');
    const marker = path.join(tmp, 'ran');
    writeFileSync(file, JSON.stringify({ checks: [{ id: 'a', command: ['/usr/bin/touch', marker], interval: 1000 }] }));
    const r = run(['run', file, '--metrics-port', String(port), ...allowRootArgs()]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`noshell run: cannot serve metrics on 127.0.0.1:${port}: the port is in use (EADDRINUSE)\n`);
    expect(r.stdout).toBe('');
    expect(existsSync(marker)).toBe(false);
  });

  it('noshell gearman-worker: the same', () => {
    const r = run(['gearman-worker', '--server=127.0.0.1:1', '--encryption=no', `--prometheus_server=127.0.0.1:${port}`, ...allowRootArgs()]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`noshell gearman-worker: cannot serve metrics on 127.0.0.1:${port}: the port is in use (EADDRINUSE)\n`);
  });
});
