// npm run soak -- [--ops N] [--concurrency C] [--interval S] [--max-rss-growth PCT] [--json]
//
// Runs N mixed operations (exec, execFile, spawn with streams, popen r/w,
// runCheck, timeouts, aborts, a child ignoring SIGTERM, output past
// maxBuffer) against the built package, C at a time, and prints this
// process's fds, threads, children, RSS and heap at intervals. Every sample
// is taken with nothing in flight, so fds, threads and children must come
// back to exactly the same figures; RSS may not grow by PCT % or more over
// the second half of the run (the trend through that half's samples). Exit
// status 1 when either fails or an operation returned something the README
// does not promise.
//
// A plain script over dist/ rather than a CLI command: it exercises exactly
// what users import, and it is a development tool, not part of the package.
import { parseArgs } from 'node:util';
import { settle } from './soak/figures.mjs';
import { OP_NAMES, opName, runOp } from './soak/ops.mjs';
import { printRow, printHeader, verdict } from './soak/report.mjs';

const { values: args } = parseArgs({
  options: {
    ops: { type: 'string', default: '1000000' },
    concurrency: { type: 'string', default: '16' },
    interval: { type: 'string', default: '10' },
    'max-rss-growth': { type: 'string', default: '5' },
    json: { type: 'boolean', default: false },
  },
});
const total = Number(args.ops);
const concurrency = Number(args.concurrency);
const intervalMs = Number(args.interval) * 1000;
const maxRssGrowth = Number(args['max-rss-growth']);
for (const [name, v] of [['ops', total], ['concurrency', concurrency], ['interval', intervalMs], ['max-rss-growth', maxRssGrowth]]) {
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
let midSampled = false;
const mid = Math.floor(total / 2);

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
    if (next === mid && !midSampled) {
      midSampled = true;
      await sample('mid');
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
printHeader(log, { total, concurrency });
const first = await sample('start');

let stalledSince = done;
const ticker = setInterval(() => {
  if (pausing === null && next < total) void sample('interval');
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

const midRow = samples.find((s) => s.label === 'mid') ?? first;
const result = verdict({
  total, done, concurrency, elapsedS: (performance.now() - started) / 1000, first, mid: midRow, last, samples,
  failures, failuresByOp, maxRssGrowth,
});
for (const line of result.lines) log(line);
if (args.json) process.stdout.write(`${JSON.stringify({ ...result.summary, samples })}\n`);
process.exitCode = result.summary.ok ? 0 : 1;
