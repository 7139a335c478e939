// CPU of a worker and everything it started. Both workers run as session
// leaders (setsid), and the C worker makes each plugin a process-group leader,
// so the session, not the group, holds them all. Summing utime+stime+cutime+
// cstime over the live members counts every descendant: a reaped one's CPU
// lives on in its reaper's cutime/cstime, and the reapers are in the session.
import { readdirSync, readFileSync } from 'node:fs';

const CLK_TCK = 100;

/** Fields from 3 (state) on of /proc/<pid>/stat, or null once it is gone. */
function statFields(pid: string | number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the last ')': the comm field may hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null; // exited while we looked
  }
}

// f[0] is field 3 (state): session is field 6, utime..cstime 14..17.
const cpuTicks = (f: string[]) => Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);

/** Milliseconds of CPU used so far by session `sid` (its live members and what they reaped). */
export function sessionCpuMs(sid: number): number {
  let ticks = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(name);
    if (f !== null && Number(f[3]) === sid) ticks += cpuTicks(f);
  }
  return (ticks * 1000) / CLK_TCK;
}

/** Milliseconds of CPU used so far by one process (gearmand), 0 once it is gone. */
export function processCpuMs(pid: number): number {
  const f = statFields(pid);
  return f === null ? 0 : (cpuTicks(f) * 1000) / CLK_TCK;
}
