import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

export const PROBE = path.resolve(__dirname, 'fixtures', 'bin', 'probe');
export const METHODS = ['posix_spawn', 'vfork', 'fork', 'auto'] as const;

/** key=value lines of `probe info` as an object. */
export function parseInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^(\w+)[=:](.*)$/.exec(line);
    if (m) out[m[1]] = m[2].trimStart();
  }
  return out;
}

/** NUL-terminated fields of `probe argv` / `probe env`. */
export function nulFields(text: string): string[] {
  const parts = text.split('\0');
  parts.pop();
  return parts;
}

export function openFds(): string[] {
  return readdirSync('/proc/self/fd');
}

/** Children of this process (any thread), with their state letter. */
export function childProcesses(): Array<{ pid: number; state: string }> {
  const out: Array<{ pid: number; state: string }> = [];
  for (const tid of readdirSync('/proc/self/task')) {
    let list: string;
    try {
      list = readFileSync(`/proc/self/task/${tid}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const p of list.split(' ').filter(Boolean)) {
      const pid = Number(p);
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        out.push({ pid, state: stat.slice(stat.lastIndexOf(')') + 2)[0] });
      } catch {
        // exited and reaped between the two reads
      }
    }
  }
  return out;
}

export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

export async function waitFor(cond: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return cond();
}

export function readPid(file: string): number {
  return Number(readFileSync(path.resolve(file), 'utf8').trim());
}

/** Whether process `pid` has a handler for signal number `signo` (SigCgt of /proc/PID/status): false once it is gone. */
export function catches(pid: number, signo: number): boolean {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return false;
  }
  const at = status.indexOf('\nSigCgt:');
  if (at < 0) return false;
  const mask = BigInt(`0x${status.slice(at + 8, status.indexOf('\n', at + 1)).trim()}`);
  return ((mask >> BigInt(signo - 1)) & 1n) === 1n;
}
