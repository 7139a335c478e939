// Issue 18: `npm pack` / `npm publish` never ship a package without both
// prebuilt addons (a checkout's `npm pack` used to ship none, silently). The
// prepack step builds what is missing or stale and fails naming what it could
// not build. Run in a copy of the tree, with a PATH that has the host's
// compiler but not the aarch64 cross toolchain.
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePrebuild, ROOT } from './packed-tarball';

let tmp: string;
let copy: string;
/** /usr/bin and /bin without aarch64-linux-gnu-*: a host toolchain, no cross one. */
let noCross: string;

beforeAll(() => {
  ensurePrebuild();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-prepack-'));
  copy = path.join(tmp, 'tree');
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of tracked) if (existsSync(path.join(ROOT, f))) cpSync(path.join(ROOT, f), path.join(copy, f), { recursive: true });
  cpSync(path.join(ROOT, 'dist'), path.join(copy, 'dist'), { recursive: true });
  cpSync(path.join(ROOT, 'prebuilds'), path.join(copy, 'prebuilds'), { recursive: true });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
  noCross = path.join(tmp, 'bin');
  mkdirSync(noCross);
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin']) {
    for (const name of readdirSync(dir)) {
      if (name.startsWith('aarch64-linux-gnu-') || existsSync(path.join(noCross, name))) continue;
      symlinkSync(path.join(dir, name), path.join(noCross, name));
    }
  }
}, 600_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function npmPack(): { status: number | null; out: string; files: string[] } {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json'], {
    cwd: copy, encoding: 'utf8', timeout: 300_000, env: { ...process.env, PATH: noCross },
  });
  let files: string[] = [];
  try {
    files = (JSON.parse(r.stdout) as Array<{ files: Array<{ path: string }> }>)[0].files.map((f) => f.path);
  } catch {
    // no JSON: the pack did not happen
  }
  return { status: r.status, out: r.stderr, files };
}

describe('prepack', () => {
  it('both prebuilds present and built from these sources: packs them, builds nothing', () => {
    const before = readFileSync(path.join(copy, 'prebuilds', 'linux-x64', 'noshell.glibc.node'));
    const r = npmPack();
    expect(r.status, r.out).toBe(0);
    expect(r.files).toEqual(expect.arrayContaining(['prebuilds/linux-x64/noshell.glibc.node', 'prebuilds/linux-arm64/noshell.glibc.node']));
    expect(r.out).not.toContain('prepack: ');
    expect(readFileSync(path.join(copy, 'prebuilds', 'linux-x64', 'noshell.glibc.node')).equals(before)).toBe(true);
  });

  it('the arm64 prebuild missing and no cross toolchain: refuses to pack, naming the file and the packages to install', () => {
    rmSync(path.join(copy, 'prebuilds', 'linux-arm64'), { recursive: true });
    const r = npmPack();
    expect(r.status).not.toBe(0);
    expect(r.files).toEqual([]);
    expect(r.out).toContain('prepack: prebuilds/linux-arm64/noshell.glibc.node is missing: building them');
    expect(r.out).toContain('aarch64-linux-gnu-gcc, aarch64-linux-gnu-g++, aarch64-linux-gnu-strip not on PATH');
    expect(r.out).toContain('apt-get install gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu');
    expect(r.out).toContain('prepack: refusing to pack popen-noshell without its prebuilt addons: prebuilds/linux-arm64/noshell.glibc.node is missing');
  });

  it('native sources changed after the x64 prebuild: rebuilds it from them before packing', () => {
    cpSync(path.join(ROOT, 'prebuilds'), path.join(copy, 'prebuilds'), { recursive: true });
    appendFileSync(path.join(copy, 'native', 'spawn.h'), '/* changed after the prebuild */\n');
    const r = npmPack();
    // x64 is rebuilt with the host's compiler; arm64 cannot be here, so the pack still fails, saying why.
    expect(r.out).toContain('prebuilds/linux-x64/noshell.glibc.node was not built from the native/ sources here');
    expect(r.out).toContain('prebuild: prebuilds/linux-x64/noshell.glibc.node');
    expect(r.out).toContain('refusing to pack popen-noshell without its prebuilt addons: prebuilds/linux-arm64/noshell.glibc.node was not built from the native/ sources here');
    expect(r.status).not.toBe(0);
    const manifest = JSON.parse(readFileSync(path.join(copy, 'prebuilds', 'manifest.json'), 'utf8'));
    expect(manifest.x64.sources).not.toBe(manifest.arm64.sources);
  }, 300_000);
});
