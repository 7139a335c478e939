import os from 'node:os';
import { getSystemErrorName } from 'node:util';
import { describe, expect, it } from 'vitest';
import { errnoName, SpawnError } from '../../src/process/errors';

// Node's name for an errno, where libuv knows the number (it does not know
// every one: ENOEXEC, ECHILD, ESTALE… have no libuv code in Node 20).
function nodeName(n: number): string | null {
  const name = getSystemErrorName(-n);
  return name.startsWith('Unknown system error') ? null : name;
}

describe('SpawnError code names', () => {
  it('errno 11 is EAGAIN, as Node says, not the later alias EWOULDBLOCK', () => {
    expect(os.constants.errno.EWOULDBLOCK).toBe(11);
    const e = new SpawnError(11, 'clone', '/bin/true', []);
    expect(e.code).toBe('EAGAIN');
    expect(e.errno).toBe(-11);
    expect(e.message).toContain('EAGAIN: resource temporarily unavailable');
  });

  it('errno 95 has the name util.getSystemErrorName gives, not the later alias EOPNOTSUPP', () => {
    expect(new SpawnError(95, 'execve', '/bin/true', []).code).toBe(getSystemErrorName(-95));
    expect(errnoName(95)).not.toBe('EOPNOTSUPP');
  });

  it('every errno number in os.constants.errno gets Node\'s name, or its first listed name where libuv has none', () => {
    const firstListed = new Map<number, string>();
    for (const [name, n] of Object.entries(os.constants.errno)) if (!firstListed.has(n)) firstListed.set(n, name);
    let checkedAgainstNode = 0;
    for (const [n, first] of firstListed) {
      const code = new SpawnError(n, 'execve', '/bin/true', []).code;
      const node = nodeName(n);
      if (node !== null) checkedAgainstNode++;
      expect(code, `errno ${n}`).toBe(node ?? first);
    }
    // Most numbers are known to libuv: the comparison above is not vacuous.
    expect(checkedAgainstNode).toBeGreaterThan(firstListed.size / 2);
    expect(errnoName(os.constants.errno.ENOEXEC)).toBe('ENOEXEC');
  });

  it('a number outside the errno table is E<n>, not one of libuv\'s pseudo-errnos (-4095 is its EOF)', () => {
    expect(getSystemErrorName(-4095)).toBe('EOF');
    expect(errnoName(4095)).toBe('E4095');
  });
});
