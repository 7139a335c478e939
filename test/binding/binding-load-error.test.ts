// Issue 10: when no addon can be loaded (no binary for this platform, or one
// that dlopen refuses), the error says where it looked and how to build one,
// instead of node-gyp-build's tuple list or a raw dlopen message.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePrebuild, PREBUILD_DIR } from '../package/packed-tarball';

const ROOT = path.resolve(__dirname, '..', '..');
const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-load-error-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A copy of the package with dist/ but neither prebuilds/ nor build/. */
function bareCopy(name: string): string {
  const pkg = path.join(tmp, name);
  mkdirSync(pkg);
  cpSync(path.join(ROOT, 'package.json'), path.join(pkg, 'package.json'));
  cpSync(path.join(ROOT, 'dist'), path.join(pkg, 'dist'), { recursive: true });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(pkg, 'node_modules'));
  return pkg;
}

interface Caught { message: string; causeMessage: string; causeCode?: string }

/** Requires the copy in a fresh process and reports what it threw. */
function load(pkg: string): Caught {
  const out = execFileSync(process.execPath, ['-e', `
    try { require(${JSON.stringify(path.join(pkg, 'dist', 'index.js'))}); console.log('null'); }
    catch (e) { console.log(JSON.stringify({ message: e.message, causeMessage: e.cause?.message, causeCode: e.cause?.code })); }`],
  { encoding: 'utf8', env: { ...process.env, PREBUILDS_ONLY: '' } });
  const caught = JSON.parse(out) as Caught | null;
  expect(caught, 'the copy loaded an addon it should not have').not.toBeNull();
  return caught!;
}

function expectGuidance(message: string, pkg: string): void {
  expect(message).toMatch(/^noshell: cannot load its native addon on linux-x64, /);
  expect(glibc).toBeDefined();
  expect(message).toContain(`glibc ${glibc} (Node ${process.version}, N-API ${process.versions.napi})`);
  expect(message).toContain(`${path.join(pkg, 'prebuilds', 'linux-x64')}/`);
  expect(message).toContain(path.join(pkg, 'native', 'build', 'Release', 'noshell.node'));
  expect(message).toContain('install a C/C++ toolchain and python3');
  expect(message).toMatch(/then run: npx noshell build-addon$/);
  expect(message).not.toMatch(/^[ \t]+at /m); // a message, not a stack
}

describe('no loadable addon', () => {
  it('neither a prebuild nor a local build: says so, names the system and how to build', () => {
    const pkg = bareCopy('none');
    const caught = load(pkg);
    expectGuidance(caught.message, pkg);
    expect(caught.message).toContain('none of them holds a binary for this system');
    // What this copy holds, not what a complete package would.
    expect(caught.message).toContain('(this copy of the package holds no prebuilt binary at all)');
    expect(caught.causeMessage).toMatch(/^No native build was found for platform=linux arch=x64/);
  });

  it('a prebuild for another architecture: dlopen\'s reason, the file it found, and dlopen\'s error as cause', () => {
    const pkg = bareCopy('aarch64');
    const dir = path.join(pkg, 'prebuilds', 'linux-x64');
    mkdirSync(dir, { recursive: true });
    // Our own addon with e_machine set to EM_AARCH64 (183): what a wrongly
    // tagged or wrongly downloaded binary looks like to dlopen.
    ensurePrebuild();
    const elf = readFileSync(path.join(PREBUILD_DIR, readdirSync(PREBUILD_DIR).find((f) => f.endsWith('.node'))!));
    elf.writeUInt16LE(183, 18);
    writeFileSync(path.join(dir, 'noshell.glibc.node'), elf);
    const caught = load(pkg);
    expectGuidance(caught.message, pkg);
    // glibc says "No such file or directory" for a foreign machine; the message
    // at least says the file was there.
    expect(caught.message).toContain(`a binary was found but could not be loaded: ${path.join(dir, 'noshell.glibc.node')}: cannot open shared object file`);
    expect(caught.causeCode).toBe('ERR_DLOPEN_FAILED');
    expect(caught.message).toContain('(this copy of the package holds prebuilt binaries for linux-x64 (glibc >= 2.28))');
  });

  it('only an arm64 prebuild on x64: names what the copy holds', () => {
    const pkg = bareCopy('arm64-only');
    ensurePrebuild();
    const dir = path.join(pkg, 'prebuilds', 'linux-arm64');
    mkdirSync(dir, { recursive: true });
    cpSync(path.join(ROOT, 'prebuilds', 'linux-arm64', 'noshell.glibc.node'), path.join(dir, 'noshell.glibc.node'));
    const caught = load(pkg);
    expectGuidance(caught.message, pkg);
    expect(caught.message).toContain('(this copy of the package holds prebuilt binaries for linux-arm64 (glibc >= 2.28))');
    expect(caught.message).toContain('none of them holds a binary for this system');
  });

  it('a broken build from source in native/build: its dlopen error, not a silent fall-back', () => {
    const pkg = bareCopy('broken-local');
    const local = path.join(pkg, 'native', 'build', 'Release');
    mkdirSync(local, { recursive: true });
    writeFileSync(path.join(local, 'noshell.node'), 'not an ELF file\n'.repeat(256));
    const caught = load(pkg);
    expectGuidance(caught.message, pkg);
    expect(caught.message).toContain(`a binary was found but could not be loaded: ${path.join(local, 'noshell.node')}: invalid ELF header`);
  });
});
