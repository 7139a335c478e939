// The worker under test, as a separate process either way (a fair comparison:
// the benchmark's own client and result reader do not share its event loop),
// in a session of its own: the C worker signals its whole process group when
// it stops, and the session lets us count the CPU of everything it started.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { queueWorkers, waitFor } from './gearman-server';
import { onInterrupt } from './gearman-interrupt';
import { stopProcess } from './gearman-stop';

export type WorkerKind = 'C' | 'noshell';

export interface WorkerSpec {
  kind: WorkerKind;
  port: number;
  key: string;
  maxWorker: number;
  /** The C mod_gearman_worker binary (kind 'C'). */
  cWorker?: string;
}

// dist/bench/ → dist/cli.js
const CLI = path.resolve(__dirname, '..', '..', 'cli.js');

export class WorkerProcess {
  private readonly dir = mkdtempSync(path.join(tmpdir(), 'noshell-bench-worker-'));
  private proc: ChildProcess | null = null;

  get pid(): number {
    return this.proc!.pid!;
  }

  async start(spec: WorkerSpec): Promise<void> {
    const common = [`--server=127.0.0.1:${spec.port}`, `--key=${spec.key}`, `--identifier=bench-${spec.kind}`,
      `--max-worker=${spec.maxWorker}`, `--logfile=${path.join(this.dir, 'worker.log')}`, '--services'];
    const [file, args] = spec.kind === 'C'
      ? [spec.cWorker!, [...common, `--min-worker=${spec.maxWorker}`]]
      // The bench's own check_dummy jobs: root (a fresh machine's `sudo npm run bench`) is fine here.
      : [process.execPath, [CLI, 'gearman-worker', ...common, '--allow-root']];
    // detached: setsid() in the child.
    this.proc = spawn(file, args, { stdio: 'ignore', detached: true });
    const p = this.proc;
    onInterrupt(p, true, this.dir);
    // Ready when gearmand lists its connections on `service`: the C worker
    // has one per child process, noshell one per server.
    const want = spec.kind === 'C' ? spec.maxWorker : 1;
    await waitFor(async () => {
      if (p.exitCode !== null || p.signalCode !== null) {
        // Its log goes with the directory when the round cleans up: show it now.
        let tail = '';
        try {
          tail = readFileSync(path.join(this.dir, 'worker.log'), 'utf8').trim().split('\n').slice(-3).join('\n');
        } catch {
          // no log written
        }
        throw new Error(`${spec.kind} worker ${file} exited at start (${p.exitCode ?? p.signalCode})${tail ? `:\n${tail}` : ''}`);
      }
      return ((await queueWorkers(spec.port))?.get('service') ?? 0) >= want;
    }, 20_000, `the ${spec.kind} worker to register ${want} time(s) on queue service`);
  }

  async stop(): Promise<void> {
    // The C worker waits for its running checks; ~5 s is enough.
    if (this.proc !== null) await stopProcess(this.proc, 10_000, true);
    this.proc = null;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
