// The soak's operation mix: every public way to run a child, with the
// failure paths (timeouts, aborts, a child ignoring SIGTERM, output past
// maxBuffer, a missing program) mixed in. Each op checks its own result and
// throws when it is not what the README promises.
import { existsSync } from 'node:fs';
import { ExecError, SpawnError, exec, execFile, popen, runCheck, spawn } from '../../dist/index.mjs';

const DUMMY = '/usr/lib/nagios/plugins/check_dummy';
const hasDummy = existsSync(DUMMY);

function expect(cond, what, got) {
  if (!cond) throw new Error(`${what}: got ${JSON.stringify(got)?.slice(0, 300)}`);
}

async function expectReject(promise, check) {
  try {
    await promise;
  } catch (err) {
    check(err);
    return;
  }
  throw new Error('expected a rejection');
}

function readAll(stream) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString()));
    stream.on('error', reject);
  });
}

const ops = {
  async exec(i) {
    const r = await exec(['/bin/echo', `exec ${i}`]);
    expect(r.exitCode === 0 && r.stdout === `exec ${i}\n`, 'exec stdout', r.stdout);
  },
  async execShell() {
    // Needs /bin/sh (a pipe): shell: 'auto' takes it.
    const r = await exec('echo a b | tr a-z A-Z', { shell: 'auto' });
    expect(r.viaShell && r.stdout === 'A B\n', 'exec via shell', r.stdout);
  },
  async execFileInput(i) {
    const r = await execFile('/bin/cat', [], { input: `in ${i}`, encoding: 'buffer' });
    expect(Buffer.isBuffer(r.stdout) && r.stdout.toString() === `in ${i}`, 'execFile input', r.stdout.toString());
  },
  async spawnStreams(i) {
    const child = spawn('/bin/cat', []);
    const out = readAll(child.stdout);
    const err = readAll(child.stderr);
    child.stdin.end(`spawn ${i}\n`.repeat(64));
    const [text, errText, st] = await Promise.all([out, err, child.exited]);
    expect(st.exitCode === 0 && text.length === `spawn ${i}\n`.length * 64 && errText === '', 'spawn streams', st);
  },
  async popenRead() {
    const r = popen(['seq', '1', '200'], 'r');
    let n = 0;
    for await (const line of r.lines()) if (line !== '') n++;
    const st = await r.close();
    expect(n === 200 && st.exitCode === 0, 'popen r', { n, st });
  },
  async popenWrite(i) {
    const w = popen(['/bin/cat'], 'w', { stdout: 'ignore' });
    for (let k = 0; k < 20; k++) w.write(`line ${i} ${k}\n`);
    const st = await w.close();
    expect(st.exitCode === 0, 'popen w', st);
  },
  async runCheck() {
    const r = hasDummy
      ? await runCheck([DUMMY, '1', 'soak warning'])
      : await runCheck(['/bin/echo', 'WARNING - soak | t=1;2;3']);
    expect(hasDummy ? r.state === 1 && r.output === 'WARNING: soak warning' : r.state === 0, 'runCheck', r);
  },
  async runCheckTimeout() {
    const r = await runCheck(['sleep', '5'], { timeout: 20, forceKillAfter: 100 });
    expect(r.timedOut && r.state === 3 && r.signal === 'SIGTERM', 'runCheck timeout', r);
  },
  async execTimeout() {
    const r = await execFile('sleep', ['5'], { timeout: 15, reject: false });
    expect(r.timedOut && r.signal === 'SIGTERM', 'exec timeout', r);
  },
  async abort() {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 10);
    await expectReject(execFile('sleep', ['5'], { signal: ac.signal }), (err) => {
      // Killed if it had started; aborted while still queued, it never ran (pid 0).
      expect(err instanceof ExecError && err.aborted && (err.signal === 'SIGTERM' || err.result.pid === 0), 'abort', err);
    });
  },
  async ignoresTerm() {
    // SIGTERM is ignored by the shell and by sleep (ignored dispositions
    // survive execve): only forceKillAfter's SIGKILL ends it. The abort waits
    // for "ready": a SIGTERM before the trap is set would simply kill it.
    const ac = new AbortController();
    const child = spawn('/bin/sh', ['-c', 'trap "" TERM; echo ready; sleep 5'], { signal: ac.signal, forceKillAfter: 20, stdin: 'ignore' });
    child.stdout.once('data', () => ac.abort());
    child.stdout.resume();
    child.stderr.resume();
    const st = await child.exited;
    expect(st.aborted && st.signal === 'SIGKILL', 'forceKillAfter', st);
  },
  async maxBuffer() {
    await expectReject(execFile('head', ['-c', '300000', '/dev/zero'], { maxBuffer: 65536, encoding: 'buffer' }), (err) => {
      expect(err instanceof ExecError && err.maxBufferExceeded === 'stdout' && err.stdout.length === 65536, 'maxBuffer', err.message);
    });
  },
  async missing() {
    await expectReject(execFile('/nonexistent/soak-program', []), (err) => {
      expect(err instanceof SpawnError && err.code === 'ENOENT', 'ENOENT', err.message);
    });
  },
};

// Weights per 100 ops: mostly the fast paths, a few of each slow/failing one.
const MIX = [
  ['exec', 18], ['execShell', 6], ['execFileInput', 12], ['spawnStreams', 14], ['popenRead', 10],
  ['popenWrite', 10], ['runCheck', 16], ['runCheckTimeout', 2], ['execTimeout', 2], ['abort', 2],
  ['ignoresTerm', 2], ['maxBuffer', 3], ['missing', 3],
];
const TABLE = MIX.flatMap(([name, weight]) => Array(weight).fill(name));
if (TABLE.length !== 100) throw new Error(`soak mix adds up to ${TABLE.length}, not 100`);

/** The name of op number i: a fixed stride through the table, so every run does the same mix. */
export function opName(i) {
  return TABLE[(i * 37) % 100];
}

export function runOp(i) {
  return ops[opName(i)](i);
}

export const OP_NAMES = MIX.map(([name]) => name);
