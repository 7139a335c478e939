// npm run soak -- [--warmup W] [--ops N] [--concurrency C] [--interval S]
//                 [--max-rss-growth PCT] [--max-heap-growth PCT] [--json]
//
// Runs W warm-up operations, then N measured ones, of a mix (exec, execFile,
// spawn with streams, popen r/w, runCheck, timeouts, aborts, a child ignoring
// SIGTERM, output past maxBuffer) against the built package, C at a time, and
// prints this process's fds, threads, children, RSS and heap at intervals.
// Every sample is taken with nothing in flight, so fds, threads and children
// must come back to exactly the same figures at every sample. Memory must
// level off after the warm-up: RSS outside V8's young generation may not grow
// by PCT % (5) or more from the first third of the measured operations to the
// last (the lowest sample of each), nor V8's heap used after a full GC by its
// PCT % (10). Exit status 1 when any fails or an operation returned something
// the README does not promise.
//
// Why a warm-up: memory climbs for the first thousands of operations of a
// healthy run while V8 sizes its young generation to the allocation rate
// (Node 24's V8 takes it from 16 to 128 MiB over ~20,000 operations, Node
// 20's stays at 32 MiB) and arenas, code and lazily made handles settle. A
// leak is growth that goes on after that, so the baseline is taken when it is
// over (issue 18: the 20,000-operation test measured from the start and failed
// on Node 24 every time; report.mjs says why the young generation is left out).
//
// A plain script over dist/ rather than a CLI command: it exercises exactly
// what users import, and it is a development tool, not part of the package.
import { parseArgs } from 'node:util';
import { settle } from './soak/figures.mjs';
import { OP_NAMES, opName, runOp } from './soak/ops.mjs';
import { printRow, printHeader, verdict } from './soak/report.mjs';

const { values: args } = parseArgs({
  options: {
    warmup: { type: 'string', default: '50000' },
    ops: { type: 'string', default: '1000000' },
    concurrency: { type: 'string', default: '16' },
    interval: { type: 'string', default: '10' },
    'max-rss-growth': { type: 'string', default: '5' },
    'max-heap-growth': { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
  },
});
const warmup = Number(args.warmup);
const measured = Number(args.ops);
const total = warmup + measured;
const concurrency = Number(args.concurrency);
const intervalMs = Number(args.interval) * 1000;
const maxRssGrowth = Number(args['max-rss-growth']);
const maxHeapGrowth = Number(args['max-heap-growth']);
if (!(warmup >= 0) || !Number.isInteger(warmup)) throw new RangeError('--warmup must be a whole number of operations (0 for none)');
if (!(measured >= 3)) throw new RangeError('--ops must be at least 3 (the measured operations are compared by thirds)');
for (const [name, v] of [['ops', measured], ['concurrency', concurrency], ['interval', intervalMs], ['max-rss-growth', maxRssGrowth], ['max-heap-growth', maxHeapGrowth]]) {
  if (!(v > 0) || !Number.isFinite(v)) throw new RangeError(`--${name} must be a positive number`);
}
// Progress goes to stderr with --json, so stdout is the one JSON document.
const log = args.json ? (line) => process.stderr.write(`${line}\n`) : (line) => process.stdout.write(`${line}\n`);

const started = performance.now();
const samples = [];
const failures = [];
const failuresByOp = {};
let next = 0;
let done = 0;
let inFlight = 0;
let lastDone = 0;
let lastDoneAt = started;
let pausing = null; // a promise workers wait on while a sample is taken
// Samples taken at a given operation, with nothing in flight: the baseline
// once the warm-up is done, and the start of the second and last thirds of
// the measured operations (each third has a sample: its lowest is compared).
const checkpoints = [
  ...(warmup > 0 ? [{ at: warmup, label: 'baseline' }] : []),
  { at: warmup + Math.floor(measured / 3), label: '1/3' },
  { at: warmup + Math.floor((measured * 2) / 3), label: '2/3' },
];

async function sample(label) {
  let resume;
  pausing = new Promise((r) => (resume = r));
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 2));
  const s = await settle();
  const now = performance.now();
  const failed = Object.values(failuresByOp).reduce((a, b) => a + b, 0);
  const row = { label, ops: done, failed, opsPerSec: ((done - lastDone) * 1000) / (now - lastDoneAt), elapsedS: (now - started) / 1000, ...s };
  lastDone = done;
  lastDoneAt = now;
  samples.push(row);
  printRow(log, row);
  pausing = null;
  resume();
  return row;
}

async function worker() {
  for (;;) {
    while (pausing !== null) await pausing;
    if (next >= total) return;
    if (checkpoints.length > 0 && next === checkpoints[0].at) {
      await sample(checkpoints.shift().label);
      continue;
    }
    const i = next++;
    inFlight++;
    try {
      await runOp(i);
    } catch (err) {
      const name = opName(i);
      failuresByOp[name] = (failuresByOp[name] ?? 0) + 1;
      if (failures.length < 20) failures.push(`op ${i} (${name}): ${err?.message ?? err}`);
    } finally {
      inFlight--;
      done++;
    }
  }
}

// Warm-up: one of each kind, so lazily created handles (the shared
// /dev/null, signal handling, JIT) exist before the first sample.
for (const name of OP_NAMES) {
  const i = Array.from({ length: 100 }, (_, k) => k).find((k) => opName(k) === name);
  await runOp(i);
}
printHeader(log, { warmup, measured, concurrency });
const first = await sample('start');

let stalledSince = done;
const ticker = setInterval(() => {
  if (pausing === null && next < total) void sample(next < warmup ? 'warm-up' : 'interval');
}, intervalMs);
// An operation that never finishes (a result that never comes) would stall
// the run forever: say so and stop instead.
const stallCheck = setInterval(() => {
  if (done === stalledSince && pausing === null) {
    log(`STALLED: no operation finished in 60 s; ${inFlight} in flight`);
    process.exit(2);
  }
  stalledSince = done;
}, 60_000);
stallCheck.unref();

await Promise.all(Array.from({ length: concurrency }, worker));
clearInterval(ticker);
while (pausing !== null) await pausing;
const last = await sample('end');

const baseline = samples.find((s) => s.label === 'baseline') ?? first;
const result = verdict({
  warmup, measured, done, concurrency, elapsedS: (performance.now() - started) / 1000, first, baseline, last, samples,
  failures, failuresByOp, maxRssGrowth, maxHeapGrowth,
});
for (const line of result.lines) log(line);
if (args.json) process.stdout.write(`${JSON.stringify({ ...result.summary, samples })}\n`);
process.exitCode = result.summary.ok ? 0 : 1;
