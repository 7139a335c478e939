// Run by test/process/fallbacks.test.ts in a fresh Node process, with the fallback
// switches (read once when the addon loads) set in its environment. Prints
// one JSON object of what it saw.
const { readdirSync, readlinkSync, openSync, closeSync } = require('node:fs');
const path = require('node:path');
const root = path.resolve(__dirname, '..', '..');
const noshell = require(path.join(root, 'dist', 'index.js'));
const probe = path.join(root, 'test', 'fixtures', 'bin', 'probe');

function fdLinks() {
  const out = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try { out.push(readlinkSync(`/proc/self/fd/${fd}`)); } catch { /* the dir's own fd */ }
  }
  return out;
}
function children() {
  let n = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    try { n += require('node:fs').readFileSync(`/proc/self/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).length; } catch { /* gone */ }
  }
  return n;
}

(async () => {
  const out = {};
  // Warm up first: the process-wide /dev/null and libuv's own fds stay open.
  await noshell.execFile('/bin/true', [], { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' });
  await new Promise((r) => setTimeout(r, 20)); // its handles finish closing
  void process.stdout; // Node opens fds lazily for it (a pipe here)
  const fdsBefore = readdirSync('/proc/self/fd').length;
  const linksBefore = fdLinks();
  // Lots of open fds that a child must not inherit.
  const extra = [];
  for (let i = 0; i < 200; i++) extra.push(openSync('/dev/null', 'r'));
  for (const method of ['posix_spawn', 'vfork', 'fork']) {
    // With the capture fault, output goes to a file instead.
    const r = await noshell.execFile(probe, ['info'], { method }).catch(() => null);
    if (r !== null) out[`fds_${method}`] = /fds=(.*)/.exec(r.stdout)[1];
  }
  for (const fd of extra) closeSync(fd);
  // cwd: posix_spawn needs glibc's addchdir_np for it ('auto' otherwise clones).
  for (const method of ['auto', 'posix_spawn']) {
    try {
      out[`cwd_${method}`] = (await noshell.execFile('/bin/pwd', [], { cwd: '/usr', method })).stdout;
    } catch (e) {
      out[`cwd_${method}`] = { name: e.name, code: e.code, step: e.step };
    }
  }

  // An exit watched from the start (no capture): pidfd or the status poll.
  const child = noshell.spawn('sleep', ['0.3'], { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' });
  out.pidfdsWhileRunning = fdLinks().filter((l) => l.includes('pidfd')).length;
  const st = await child.exited;
  out.sleep = { exitCode: st.exitCode, durationMs: Math.round(st.durationMs) };
  try {
    const t = await noshell.execFile(probe, ['group', '/dev/null', '30'], { timeout: 200, reject: false });
    out.timeout = { timedOut: t.timedOut, signal: t.signal, stdout: t.stdout };
  } catch (e) {
    out.timeoutError = { name: e.name, code: e.code, step: e.step };
  }
  const c = await noshell.runCheck(['/usr/lib/nagios/plugins/check_dummy', '1', 'warn']);
  out.check = { state: c.state, output: c.output };
  try {
    const e = await noshell.exec('/bin/echo captured');
    out.echo = e.stdout;
  } catch (e) {
    out.echoError = { name: e.name, code: e.code, step: e.step, syscall: e.syscall };
  }
  await new Promise((r) => setTimeout(r, 50));
  out.childrenLeft = children();
  out.fdsLeaked = readdirSync("/proc/self/fd").length - fdsBefore;
  if (process.env.DEBUG_FDS) out.links = [linksBefore, fdLinks()];
  console.log(JSON.stringify(out));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
