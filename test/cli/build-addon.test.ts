// `noshell build-addon` runs node-gyp as whoever runs it (root, for a global
// install): it must never run a copy that someone else could have put in its
// way. Reproduced before the fix: run as root in a directory under /tmp, with
// no npm beside the running node, a /tmp/node_modules/node-gyp planted by
// another user ran as uid 0 (node-gyp was resolved from the working directory).
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findNodeGyp, untrustedAddonApi } from '../../src/cli/build-addon';
import { isRoot, NOBODY } from '../unprivileged';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');

/** A hard link where the file system allows one (no 100 MB copy), else a copy. */
function linkOrCopy(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
    chmodSync(to, 0o755);
  }
}

if (!isRoot) console.warn('skipped: planting node-gyp as another user needs root (chown)');

describe.runIf(isRoot)('build-addon finds node-gyp only where no one else can put one', () => {
  let shared: string;
  let work: string;
  let planted: string;
  let mark: string;
  let bareNode: string;
  let nodeDir: string;

  beforeAll(() => {
    // A shared directory as /tmp is: world-writable and sticky.
    shared = mkdtempSync(path.join(os.tmpdir(), 'noshell-plant-'));
    chmodSync(shared, 0o1777);
    mark = path.join(shared, 'planted-ran');
    const gyp = path.join(shared, 'node_modules', 'node-gyp', 'bin');
    mkdirSync(gyp, { recursive: true });
    planted = path.join(gyp, 'node-gyp.js');
    const payload = `require('fs').writeFileSync(${JSON.stringify(mark)}, String(process.getuid()));\n`;
    writeFileSync(planted, payload);
    // Also one as a program in the working directory, for a PATH that holds ".".
    work = path.join(shared, 'work');
    mkdirSync(work);
    writeFileSync(path.join(work, 'node-gyp'), `#!${process.execPath}\n${payload}`, { mode: 0o755 });
    for (const p of [path.join(shared, 'node_modules'), path.join(shared, 'node_modules', 'node-gyp'), gyp, planted, work, path.join(work, 'node-gyp')]) {
      chownSync(p, NOBODY, NOBODY);
    }
    // A node with no npm beside it (no ../lib/node_modules/npm): as a distribution's
    // node without npm, or one unpacked by hand.
    nodeDir = mkdtempSync(path.join(os.tmpdir(), 'noshell-bare-node-'));
    mkdirSync(path.join(nodeDir, 'bin'));
    bareNode = path.join(nodeDir, 'bin', 'node');
    linkOrCopy(process.execPath, bareNode);
  });
  afterAll(() => {
    rmSync(shared, { recursive: true, force: true });
    rmSync(nodeDir, { recursive: true, force: true });
  });

  it('run as root in a shared directory: the node-gyp planted there (node_modules, or "." on PATH) is not run', () => {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
    // The toolchain it checks for, and no node-gyp (npm run/npx put theirs on PATH): only "." holds one.
    const tools = path.join(nodeDir, 'tools');
    mkdirSync(tools);
    for (const tool of ['cc', 'c++', 'make', 'python3']) {
      const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      expect(found, `${tool} on PATH`).not.toBe('');
      symlinkSync(found, path.join(tools, tool));
    }
    env.PATH = `.:${tools}`;
    const r = spawnSync(bareNode, [CLI, 'build-addon'], { cwd: work, env, encoding: 'utf8', timeout: 120_000 });
    expect(existsSync(mark), `the planted node-gyp ran: ${r.stdout}${r.stderr}`).toBe(false);
    // With no node-gyp of its own in reach it says so; it never builds with what it found there.
    expect(r.stdout).not.toContain(shared);
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(1);
    expect(r.stderr).toContain('node-gyp not found');
  });

  it('a node-gyp that npm names, but that another user may change, is refused with the reason', () => {
    const choice = findNodeGyp({ PATH: '/usr/bin:/bin', npm_config_node_gyp: planted });
    expect(choice.command?.includes(planted) ?? false).toBe(false);
    expect(choice.refused).toHaveLength(1);
    expect(choice.refused[0]).toContain(planted);
    expect(choice.refused[0]).toMatch(/owned by uid 65534/);
  });

  it("node-addon-api found by walking up into a shared directory (a package without its own) is refused, as gyp would run it", () => {
    const api = path.join(shared, 'node_modules', 'node-addon-api');
    mkdirSync(api, { recursive: true });
    writeFileSync(path.join(api, 'package.json'), '{"name":"node-addon-api","main":"index.js"}');
    writeFileSync(path.join(api, 'index.js'), `require('fs').writeFileSync(${JSON.stringify(mark)}, 'api');\n`);
    for (const p of [api, path.join(api, 'package.json'), path.join(api, 'index.js')]) chownSync(p, NOBODY, NOBODY);
    // Root's package, with no node_modules of its own, below the shared directory.
    const native = path.join(shared, 'rootdir', 'pkg', 'native');
    mkdirSync(native, { recursive: true });
    expect(untrustedAddonApi(native)).toMatch(/node-addon-api\/index\.js.*owned by uid 65534/);
    // This package's own copy is taken.
    expect(untrustedAddonApi(path.join(__dirname, '..', '..', 'native'))).toBeNull();
    expect(existsSync(mark)).toBe(false);
  });

  it('a FIFO named as node-gyp is refused (its writer would feed node the script)', () => {
    const fifo = path.join(shared, 'node-gyp.js');
    spawnSync('mkfifo', ['-m', '666', fifo]);
    chownSync(fifo, NOBODY, NOBODY);
    const choice = findNodeGyp({ PATH: '/usr/bin:/bin', npm_config_node_gyp: fifo });
    expect(choice.command?.includes(fifo) ?? false).toBe(false);
    expect(choice.refused).toEqual([`${fifo}: not a regular file`]);
  });

  it("npm's own node-gyp beside the running node (root's) is taken, and named before it runs", () => {
    // The layout of Node's tarballs: bin/node and lib/node_modules/npm/node_modules/node-gyp.
    const withNpm = path.join(nodeDir, 'with-npm');
    mkdirSync(path.join(withNpm, 'bin'), { recursive: true });
    const node = path.join(withNpm, 'bin', 'node');
    linkOrCopy(process.execPath, node);
    const npmGyp = path.join(withNpm, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
    mkdirSync(path.dirname(npmGyp), { recursive: true });
    writeFileSync(npmGyp, '');
    const r = spawnSync(node, ['-e', `console.log(JSON.stringify(require(${JSON.stringify(path.join(__dirname, '..', '..', 'dist', 'cli', 'build-addon.js'))})
      .findNodeGyp({ PATH: '/usr/bin:/bin' })))`], { cwd: work, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ command: [node, npmGyp], refused: [] });
  });
});
