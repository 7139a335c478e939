// The spawn loop `noshell bench` runs in another runtime (Bun, Deno, or
// another Node), so that runtime's own API is measured in the same rounds as
// the C loops and the in-process drivers:
//
//   <runtime> runtime-loop.mjs '<json>'       (deno: deno run -A runtime-loop.mjs '<json>')
//
// json: { api, seconds, concurrency, heapMiB, argv, loopDelay, parent, noshell? }
//   api: 'version' (print the runtime, and with noshell whether it loads; then stop), 'Bun.spawn', 'Deno.Command',
//        'noshell.execFile' (Node; `noshell` is the path of noshell's dist/index.js),
//        'cp.execFile' (node:child_process, in any of the three)
// Every operation runs argv, captures its stdout and waits for its exit, as the
// in-process drivers do. It keeps `concurrency` operations in flight for a
// warm-up, then for `seconds`, and prints one JSON line: operations, seconds,
// CPU of this process (all threads) and of its reaped children, the time spent
// in each synchronous call and, with loopDelay, how late a 1 ms timer fired
// over the window (the timer costs CPU of its own: see docs/benchmarks.md).
// Bun and Deno leave stderr out (/dev/null); execFile captures it: one pipe
// more per operation on the Node rows. It stops as soon as its parent (the
// benchmark, `parent`) is gone.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import process from 'node:process';

const runtime = typeof Bun !== 'undefined' ? { name: 'bun', version: Bun.version }
  : typeof Deno !== 'undefined' ? { name: 'deno', version: Deno.version.deno }
    : { name: 'node', version: process.versions.node };

/** Starts one operation; returns the promise of its end (rejects unless exit 0). */
function starter(cfg) {
  const [file, ...args] = cfg.argv;
  switch (cfg.api) {
    case 'Bun.spawn':
      return () => {
        const p = Bun.spawn(cfg.argv, { stdin: 'ignore', stdout: 'pipe', stderr: 'ignore' });
        return new Response(p.stdout).arrayBuffer().then(() => p.exited).then((code) => {
          if (code !== 0) throw new Error(`exit ${code}`);
        });
      };
    case 'Deno.Command':
      return () => new Deno.Command(file, { args, stdin: 'null', stdout: 'piped', stderr: 'null' }).output().then((r) => {
        if (r.code !== 0) throw new Error(`exit ${r.code}`);
      });
    case 'noshell.execFile': {
      const { execFile: nsExecFile } = createRequire(import.meta.url)(cfg.noshell);
      return () => nsExecFile(file, args);
    }
    case 'cp.execFile':
      return () => new Promise((resolve, reject) => execFile(file, args, (err) => (err ? reject(err) : resolve())));
    default:
      throw new Error(`runtime-loop: unknown api ${JSON.stringify(cfg.api)}`);
  }
}

const CLK_TCK = 100;

/** CPU of reaped children, ms (/proc/self/stat cutime + cstime). */
function childCpuMs() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLK_TCK;
}

function percentile(sorted, p) {
  return sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function stats(values) {
  const sorted = values.slice().sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.length === 0 ? null : sorted[sorted.length - 1] };
}

/** Keeps `concurrency` operations in flight until `ms` have passed; returns how many ended. */
async function run(start, concurrency, ms, blocked, parent) {
  const end = performance.now() + ms;
  let done = 0;
  const worker = async () => {
    while (performance.now() < end) {
      // The benchmark was killed: no one reads the result, stop spawning.
      if (parent !== undefined && process.ppid !== parent) process.exit(2);
      const t = performance.now();
      const p = start();
      blocked?.push(performance.now() - t);
      await p;
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return done;
}

/** The median gap between ticks of a 1 ms interval on an idle loop, over 60 ticks (at least 1 ms). */
function idlePeriod() {
  return new Promise((resolve) => {
    const gaps = [];
    let last = performance.now();
    const timer = setInterval(() => {
      const t = performance.now();
      gaps.push(t - last);
      last = t;
      if (gaps.length === 60) {
        clearInterval(timer);
        gaps.sort((a, b) => a - b);
        resolve(Math.max(1, gaps[30]));
      }
    }, 1);
  });
}

async function main() {
  const cfg = JSON.parse(process.argv[process.argv.length - 1]);
  if (cfg.api === 'version') {
    const loads = cfg.noshell === undefined ? {} : { noshell: typeof createRequire(import.meta.url)(cfg.noshell).execFile === 'function' };
    process.stdout.write(`${JSON.stringify({ ...runtime, ...loads })}\n`);
    return;
  }
  const held = [];
  for (let i = 0; i < cfg.heapMiB / 16; i++) held.push(new Uint8Array(16 << 20).fill(1));
  const start = starter(cfg);
  // A 1 ms timer's own period here, idle: Deno's fires about every 2 ms with
  // nothing else to do. A delay is what a tick comes later than that.
  const period = cfg.loopDelay ? await idlePeriod() : 1;
  await run(start, cfg.concurrency, Math.min(200, cfg.seconds * 200), null, cfg.parent);

  const blocked = [];
  const delays = [];
  let last = performance.now();
  const tick = () => {
    const t = performance.now();
    delays.push(Math.max(0, t - last - period));
    last = t;
  };
  const timer = cfg.loopDelay ? setInterval(tick, 1) : null;
  const cpu0 = process.cpuUsage();
  const kids0 = childCpuMs();
  const t0 = performance.now();
  const spawns = await run(start, cfg.concurrency, cfg.seconds * 1000, blocked, cfg.parent);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const kids = childCpuMs() - kids0;
  if (timer !== null) {
    tick();
    clearInterval(timer);
  }
  process.stdout.write(`${JSON.stringify({
    runtime, api: cfg.api, spawns, seconds, heldMiB: held.length * 16, timerPeriodMs: period,
    selfCpuMs: (cpu.user + cpu.system) / 1000, childCpuMs: kids,
    blocked: stats(blocked), loopDelay: stats(delays),
  })}\n`);
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`runtime-loop: ${err && err.stack ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
