// The options object each check of a runner hands to runCheck: its check
// options plus the runner's stop signal. Checks added one after another with
// every option the same value share one object (checks of one file mostly
// do; nothing writes to it): one object less per check (issue 19).
import type { CheckOptions } from '../run-check';

export class SharedOptions {
  readonly #signal: AbortSignal;
  /** The object of the check added last. */
  #last: CheckOptions | null = null;

  constructor(signal: AbortSignal) {
    this.#signal = signal;
  }

  /** `options` with the stop signal: the last check's object when they are alike. */
  like(options: CheckOptions): CheckOptions {
    const last = this.#last;
    if (last !== null) {
      let same = true;
      let n = 0;
      for (const k in options) {
        n++;
        if (!Object.hasOwn(last, k) || (last as Record<string, unknown>)[k] !== (options as Record<string, unknown>)[k]) {
          same = false;
          break;
        }
      }
      // `last` has the signal besides.
      if (same && n + 1 === Object.keys(last).length) return last;
    }
    const opts = Object.assign({}, options);
    opts.signal = this.#signal;
    this.#last = opts;
    return opts;
  }
}
