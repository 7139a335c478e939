// Run by test/process/env-race.test.ts in a fresh Node process (NOSHELL_NO_EXECUTOR
// is read when the library loads). A worker sharing the process environment
// (SHARE_ENV) sets and deletes many distinct variables in a tight loop, so
// glibc reallocates environ's array and shifts its entries, while this
// thread runs execs that inherit the environment. Prints one JSON object.
//   argv[2]: 'exec' (execFile, buffered) or a spawn method name
//   argv[3]: how many execs
const { Worker, SHARE_ENV } = require('node:worker_threads');
const { readdirSync, readFileSync, readlinkSync } = require('node:fs');
const path = require('node:path');
const noshell = require(path.join(__dirname, '..', '..', 'dist', 'index.js'));

const mode = process.argv[2];
const count = Number(process.argv[3]);
// Values the main thread set before the race: every child must see them.
process.env.NSRACE_ANCHOR_A = 'anchor-a';
process.env.NSRACE_ANCHOR_B = 'anchor-b';

// A variable the worker sets always has the value its name implies, so a
// torn or half-copied entry is seen as a mismatch.
const churn = `
  const { parentPort } = require('node:worker_threads');
  const flag = new Int32Array(require('node:worker_threads').workerData);
  let rounds = 0;
  parentPort.postMessage('ready');
  while (Atomics.load(flag, 0) === 0) {
    for (let i = 0; i < 200; i++) process.env['NSRACE_V' + i] = 'value-of-' + i + '-' + 'x'.repeat(i % 40);
    for (let i = 0; i < 200; i++) delete process.env['NSRACE_V' + i];
    rounds++;
  }
  parentPort.postMessage(rounds);
`;

function fds() {
  const out = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try { out.push(readlinkSync(`/proc/self/fd/${fd}`)); } catch { /* the dir's own fd */ }
  }
  return out;
}
function children() {
  let n = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    try { n += readFileSync(`/proc/self/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).length; } catch { /* gone */ }
  }
  return n;
}

/** The child's environment (env -0), checked entry by entry. */
function check(text, bad) {
  const seen = new Set();
  for (const entry of text.split('\0')) {
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    const name = entry.slice(0, eq);
    seen.add(name);
    if (name.startsWith('NSRACE_V')) {
      const i = Number(name.slice(8));
      if (entry.slice(eq + 1) !== 'value-of-' + i + '-' + 'x'.repeat(i % 40)) bad.push(entry);
    } else if (eq <= 0) {
      bad.push(entry);
    }
  }
  if (!seen.has('NSRACE_ANCHOR_A') || !seen.has('NSRACE_ANCHOR_B') || !seen.has('PATH')) bad.push('anchors missing');
}

async function one(bad) {
  if (mode === 'exec') {
    const r = await noshell.execFile('env', ['-0'], { encoding: 'utf8', reject: false });
    if (r.exitCode !== 0) bad.push(`exit ${r.exitCode} ${r.signal} ${r.stderr}`);
    check(r.stdout, bad);
    return;
  }
  const p = noshell.spawn('env', ['-0'], { method: mode, stdin: 'ignore', stderr: 'ignore' });
  const chunks = [];
  for await (const c of p.stdout) chunks.push(c);
  const st = await p.exited;
  if (st.exitCode !== 0) bad.push(`exit ${st.exitCode} ${st.signal}`);
  check(Buffer.concat(chunks).toString(), bad);
}

(async () => {
  // Warm up the same path first: its process-wide /dev/null stays open.
  await one([]);
  // And a first Worker: Node keeps a /dev/null of its own open after it
  // (seen with stdout a pipe, noshell or not).
  await new Worker('', { eval: true }).terminate();
  await new Promise((r) => setTimeout(r, 20));
  const fds0 = fds();
  const stop = new SharedArrayBuffer(4);
  const worker = new Worker(churn, { eval: true, env: SHARE_ENV, workerData: stop });
  const rounds = new Promise((resolve) => worker.on('message', (m) => { if (m !== 'ready') resolve(m); }));
  await new Promise((r) => worker.once('message', r));
  const bad = [];
  let ok = 0;
  let failed = 0;
  // Four in flight: the executor's threads and the loop overlap the worker.
  let next = 0;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (next++ < count) {
      const mine = [];
      try { await one(mine); } catch (e) { mine.push(String((e && e.code) || e)); }
      if (mine.length === 0) ok++; else failed++;
      bad.push(...mine);
    }
  }));
  Atomics.store(new Int32Array(stop), 0, 1);
  const churned = await rounds;
  await worker.terminate();
  await new Promise((r) => setTimeout(r, 50));
  process.stdout.write(JSON.stringify({
    ok, failed, churned, bad: bad.slice(0, 5), badCount: bad.length,
    fdsLeaked: fds().length - fds0.length, childrenLeft: children(),
  }) + '\n');
})();
