// A fresh gearmand per round on a free loopback port, stopped by pid, and its
// text admin protocol's `status` (what gearadmin --status prints).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onInterrupt } from './gearman-interrupt';
import { stopProcess } from './gearman-stop';

/** gearmand on PATH (absolute entries only: "" or "." would be the working directory), then the sbin dirs. */
export function findGearmand(): string | null {
  const dirs = [...(process.env.PATH ?? '').split(':').filter((d) => path.isAbsolute(d)), '/usr/sbin', '/usr/local/sbin'];
  return dirs.map((d) => path.join(d, 'gearmand')).find((p) => existsSync(p)) ?? null;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export async function waitFor(cond: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`noshell bench --gearman: timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `status` of the admin protocol: queue → workers able to take its jobs; null when not answering. */
export function queueWorkers(port: number): Promise<Map<string, number> | null> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => s.write('status\n'));
    let text = '';
    const done = (v: Map<string, number> | null) => {
      s.destroy();
      resolve(v);
    };
    s.setTimeout(2000, () => done(null));
    s.on('error', () => done(null));
    s.on('data', (c) => {
      text += c.toString('latin1');
      if (!/(?:^|\n)\.\n$/.test(text)) return;
      const m = new Map<string, number>();
      for (const line of text.split('\n')) {
        const [queue, , , workers] = line.split('\t');
        if (workers !== undefined) m.set(queue, Number(workers));
      }
      done(m);
    });
  });
}

export class BenchGearmand {
  private readonly dir = mkdtempSync(path.join(tmpdir(), 'noshell-bench-gearmand-'));
  private proc: ChildProcess | null = null;
  port = 0;

  get pid(): number {
    return this.proc!.pid!;
  }

  async start(binary: string): Promise<void> {
    this.port = await freePort();
    this.proc = spawn(binary, ['-L', '127.0.0.1', '-p', String(this.port), '-l', path.join(this.dir, 'gearmand.log'),
      '--verbose', 'WARNING'], { stdio: 'ignore' });
    const p = this.proc;
    onInterrupt(p, false, this.dir);
    await waitFor(async () => {
      if (p.exitCode !== null || p.signalCode !== null) throw new Error(`gearmand exited at start (log in ${this.dir})`);
      return (await queueWorkers(this.port)) !== null;
    }, 10_000, `gearmand on port ${this.port}`);
  }

  async stop(): Promise<void> {
    if (this.proc !== null) await stopProcess(this.proc, 5000);
    this.proc = null;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
