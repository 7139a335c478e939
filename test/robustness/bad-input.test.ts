import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { exec, execFile, spawn } from '../../src/index';
import { childProcesses } from '../helpers';

// Each call must throw before anything is spawned.
const cases: Array<[string, () => unknown, ErrorConstructor]> = [
  ['file not a string', () => spawn(42 as never), TypeError],
  ['empty file', () => spawn(''), TypeError],
  ['NUL in file', () => spawn('/bin/true\0x'), TypeError],
  ['args not an array', () => spawn('/bin/true', 'a b' as never), TypeError],
  ['non-string arg', () => spawn('/bin/true', ['a', 1 as never]), TypeError],
  ['NUL in arg', () => spawn('/bin/true', ['a\0b']), TypeError],
  ['NUL in env value', () => spawn('/bin/true', [], { env: { A: 'x\0y' } }), TypeError],
  ['non-string env value', () => spawn('/bin/true', [], { env: { A: 1 as never } }), TypeError],
  ['= in env name', () => spawn('/bin/true', [], { env: { 'A=B': 'x' } }), TypeError],
  ['env not an object', () => spawn('/bin/true', [], { env: 'A=1' as never }), TypeError],
  ['unknown option', () => spawn('/bin/true', [], { shel: true } as never), TypeError],
  ['options not an object', () => spawn('/bin/true', [], 'x' as never), TypeError],
  ['negative timeout', () => spawn('/bin/true', [], { timeout: -1 }), RangeError],
  ['timeout too large for a timer', () => spawn('/bin/true', [], { timeout: 2 ** 40 }), RangeError],
  ['NaN timeout', () => spawn('/bin/true', [], { timeout: NaN }), TypeError],
  ['negative forceKillAfter', () => spawn('/bin/true', [], { forceKillAfter: -5 }), RangeError],
  ['unknown stdio', () => spawn('/bin/true', [], { stdout: 'bogus' as never }), TypeError],
  ['stdout: stdout', () => spawn('/bin/true', [], { stdout: 'stdout' as never }), TypeError],
  ['negative fd', () => spawn('/bin/true', [], { stdin: -1 }), TypeError],
  ['unknown method', () => spawn('/bin/true', [], { method: 'clone' as never }), TypeError],
  ['inherited method name', () => spawn('/bin/true', [], { method: 'toString' as never }), TypeError],
  ['bad uid', () => spawn('/bin/true', [], { uid: -1 }), TypeError],
  ['unknown killSignal', () => spawn('/bin/true', [], { killSignal: 'SIGFOO' as never }), TypeError],
  ['killSignal 0', () => spawn('/bin/true', [], { killSignal: 0 }), TypeError],
  ['signal not an AbortSignal', () => spawn('/bin/true', [], { signal: {} as never }), TypeError],
  ['bad cwd type', () => spawn('/bin/true', [], { cwd: 5 as never }), TypeError],
  ['bad extendEnv', () => spawn('/bin/true', [], { extendEnv: 'no' as never }), TypeError],
];

describe('bad input throws typed errors before spawning', () => {
  it.each(cases)('%s', (_name, call, type) => {
    expect(call).toThrow(type);
    expect(childProcesses()).toEqual([]);
  });

  it('messages name the problem', () => {
    expect(() => spawn('/bin/true', ['ok', 'a\0b'])).toThrow(/args\[1\] must not contain NUL/);
    expect(() => spawn('/bin/true', [], { tiemout: 5 } as never)).toThrow(/unknown option "tiemout"/);
  });

  it('a function where a value belongs is named, not quoted as its source text', () => {
    const option = { argv0: function secretSource() { return 'x'; } } as never;
    expect(() => spawn('/bin/true', [], option)).toThrow(/^argv0 must be a string, got a function$/);
  });

  it('a NUL in a file: URL cwd is a TypeError (it was cut at the NUL and the child ran in the truncated path)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'noshell-cwd-'));
    try {
      // Before the fix this ran /bin/pwd in `dir` itself.
      const url = new URL(`${pathToFileURL(dir).href}%00sub`);
      expect(() => spawn('/bin/pwd', [], { cwd: url })).toThrow(/cwd must not contain NUL/);
      await expect(execFile('/bin/pwd', [], { cwd: url })).rejects.toThrow(TypeError);
      expect(childProcesses()).toEqual([]);
      // The same URL without the NUL part still works.
      expect((await execFile('/bin/pwd', [], { cwd: pathToFileURL(dir) })).stdout).toBe(`${dir}\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a bad fd number is a SpawnError EBADF, not a crash', () => {
    expect(() => spawn('/bin/true', [], { stdout: 999_999 })).toThrow(expect.objectContaining({ code: 'EBADF', step: 'stdio' }));
  });

  it('exec and execFile reject their own bad options', async () => {
    await expect(exec([] as never)).rejects.toThrow(TypeError);
    await expect(exec(7 as never)).rejects.toThrow(TypeError);
    await expect(execFile('/bin/true', [], { encoding: 'latin1' as never })).rejects.toThrow(TypeError);
    await expect(execFile('/bin/true', [], { maxBuffer: -1 })).rejects.toThrow(TypeError);
    await expect(execFile('/bin/true', [], { input: 5 as never })).rejects.toThrow(TypeError);
    await expect(execFile('/bin/true', [], { input: 'x', stdin: 'ignore' })).rejects.toThrow(TypeError);
    await expect(execFile('/bin/true', [], { reject: 'no' as never })).rejects.toThrow(TypeError);
    expect(childProcesses()).toEqual([]);
  });
});
