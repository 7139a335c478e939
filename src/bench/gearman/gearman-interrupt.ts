// A benchmark stopped with Ctrl-C or SIGTERM: the workers run in sessions of
// their own, so the terminal's signal does not reach them; pass it on to
// whatever is still running, then exit as the signal would.
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

const live = new Map<ChildProcess, { group: boolean; dir: string }>();
let installed = false;

/** Registers a child (and the scratch directory of its log) for an interrupted run. */
export function onInterrupt(p: ChildProcess, group: boolean, dir: string): void {
  live.set(p, { group, dir });
  p.once('exit', () => live.delete(p));
  if (installed) return;
  installed = true;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      for (const [child, { group, dir }] of live) {
        try {
          process.kill(group ? -child.pid! : child.pid!, 'SIGTERM');
        } catch {
          // already gone
        }
        // The process may still write its log there; unlinked, that is harmless.
        rmSync(dir, { recursive: true, force: true });
      }
      process.exit(sig === 'SIGINT' ? 130 : 143);
    });
  }
}
