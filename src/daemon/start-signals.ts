// The start of a daemon command, before its own signal handlers are in. Node
// leaves a signal at its default until a listener is added, so until then
// SIGHUP (a `systemctl reload`, logrotate's `kill -HUP`) ended the process
// with 129 and no word, and systemd, which takes death by SIGHUP as clean,
// did not restart it; `noshell run` reads, validates and resolves its whole
// checks file first (1–2.5 s at 50,000 checks). src/cli.ts holds the signals
// from the moment it knows a daemon command is starting: they are recorded
// here, and the command acts on them once its own handlers are in (a SIGHUP
// reloads once started; SIGINT/SIGTERM abort the start's load and stop).
import { STOP_SIGNALS, type StopSignal } from './stop-signals';

export class StartSignals {
  /** A SIGHUP came during the start. */
  hup = false;
  /** The first SIGINT/SIGTERM that came during the start, or null. */
  stop: StopSignal | null = null;
  private readonly abort = new AbortController();
  private readonly handler = (sig: NodeJS.Signals): void => {
    if (sig === 'SIGHUP') this.hup = true;
    else if (this.stop === null) {
      this.stop = sig as StopSignal;
      this.abort.abort();
    }
  };

  constructor() {
    for (const s of STOP_SIGNALS) process.on(s, this.handler);
  }

  /** Aborted by the first SIGINT/SIGTERM: what the start awaits can end early. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** Stops holding: the command's own handlers are in (or it is done). */
  release(): void {
    for (const s of STOP_SIGNALS) process.off(s, this.handler);
    if (held === this) held = null;
  }
}

let held: StartSignals | null = null;

/** Starts holding SIGHUP, SIGINT and SIGTERM (once per process). */
export function holdStartSignals(): StartSignals {
  held ??= new StartSignals();
  return held;
}

/** What holds the start's signals, holding them from now if nothing did: the command releases it. */
export function takeStartSignals(): StartSignals {
  return holdStartSignals();
}
