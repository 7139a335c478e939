// The signals that ask the CLI to stop. Our children lead their own process
// groups (processGroup: true), so the terminal's Ctrl-C, a hang-up or a
// supervisor's SIGTERM reach only us: if Node died of them by default, the
// children would run on. While these handlers are installed, the commands
// stop their children's groups before they exit.
import os from 'node:os';

export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

export interface StopSignals {
  /** The first stop signal received, or null. */
  readonly caught: StopSignal | null;
  /** Acts as if `sig` had come now (one that came before the handlers were in). */
  trigger(sig: StopSignal): void;
  remove(): void;
}

/**
 * `onStop` runs once, for the first signal; later ones go to `onRepeat`.
 * `signals` narrows the set (`noshell run` takes SIGHUP to mean reload).
 */
export function onStopSignals(
  onStop: (sig: StopSignal) => void,
  onRepeat?: (sig: StopSignal) => void,
  signals: readonly StopSignal[] = STOP_SIGNALS,
): StopSignals {
  let caught: StopSignal | null = null;
  const handler = (sig: NodeJS.Signals) => {
    const s = sig as StopSignal;
    if (caught !== null) return onRepeat?.(s);
    caught = s;
    onStop(s);
  };
  for (const s of signals) process.on(s, handler);
  return {
    get caught() {
      return caught;
    },
    trigger: (sig) => handler(sig),
    remove() {
      for (const s of signals) process.off(s, handler);
    },
  };
}

/** What a shell reports for a process ended by `sig`: 128 + its number. */
export function signalExitStatus(sig: StopSignal): number {
  return 128 + os.constants.signals[sig];
}
