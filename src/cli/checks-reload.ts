// Applying a (re)loaded checks file to a running CheckRunner: checks whose id
// and whole definition are unchanged are left alone, so they keep their next
// run time, attempt and state; new ids are added, missing ones removed, and
// changed ones replaced (a run in progress finishes first: the runner never
// runs two of one id at once).
import { checkDefinition } from '../check/definition';
import type { CheckDefinition, CheckRunner } from '../check/runner';

export interface ReloadSummary {
  added: string[];
  removed: string[];
  changed: string[];
  unchanged: number;
}

/**
 * Whether two definitions are the same check: equal values, object keys in
 * any order, keys whose value is undefined left out (as JSON would), numbers
 * by their text (NaN is NaN, -0 is 0). Compared in place: a canonical text of
 * each definition (keys sorted) cost ~3 µs per check per reload, and kept as
 * ropes those texts were ~500 B of heap per check.
 */
export function sameDefinition(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b) return false;
  if (typeof a !== 'object' || a === null || b === null) return typeof a === 'number' && String(a) === String(b);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameDefinition(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let defined = 0;
  for (const k of Object.keys(x)) {
    if (x[k] === undefined) continue;
    defined++;
    if (!Object.hasOwn(y, k) || !sameDefinition(x[k], y[k])) return false;
  }
  for (const k of Object.keys(y)) if (y[k] !== undefined) defined--;
  return defined === 0;
}

/** Checks compared (or passed over as unchanged) per step of an apply. */
const STEP = 32;

/** How long one slice of a sliced apply may hold the event loop, ms. */
export const RELOAD_SLICE_MS = 10;

/**
 * What the runner holds, by id: each definition as applied. Kept, not
 * copied: the caller must not change a definition after applying it (the
 * CLI makes new ones from the file at every load).
 */
export class AppliedChecks {
  readonly #applied = new Map<string, CheckDefinition>();
  #slicing = 0;

  constructor(private readonly runner: CheckRunner) {}

  /** Makes the runner hold exactly `defs`; validates all before touching anything. */
  apply(defs: readonly CheckDefinition[]): ReloadSummary {
    const summary: ReloadSummary = { added: [], removed: [], changed: [], unchanged: 0 };
    for (const step = this.#steps(defs, summary); !step.next().done;);
    return summary;
  }

  /**
   * apply() in slices of at most ~sliceMs each, the event loop free between
   * them (a reload of 100,000 checks is seconds of work: checks scheduled
   * meanwhile must not start that late). Validates all before touching
   * anything, as apply() does; `stopping()` true between slices ends it
   * (the runner is being stopped: what is left is not applied).
   */
  async applyInSlices(
    defs: readonly CheckDefinition[], stopping: () => boolean = () => false, sliceMs = RELOAD_SLICE_MS,
  ): Promise<ReloadSummary> {
    this.#slicing++;
    try {
      return await this.#inSlices(defs, stopping, sliceMs);
    } finally {
      this.#slicing--;
    }
  }

  /** Whether an applyInSlices() is under way: the runner's checks are changing, a few thousand at a time. */
  get applying(): boolean {
    return this.#slicing > 0;
  }

  async #inSlices(defs: readonly CheckDefinition[], stopping: () => boolean, sliceMs: number): Promise<ReloadSummary> {
    const summary: ReloadSummary = { added: [], removed: [], changed: [], unchanged: 0 };
    const step = this.#steps(defs, summary);
    for (;;) {
      const until = performance.now() + sliceMs;
      let done = false;
      // A step is up to STEP checks (tens of µs): the clock is read after each.
      while (!done) {
        done = step.next().done === true;
        if (performance.now() >= until) break;
      }
      if (done) return summary;
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (stopping()) {
        void step.return(undefined);
        return summary;
      }
    }
  }

  /**
   * The work of an apply, up to STEP checks per step (a resume of this
   * generator per check was ~20 % of the apply), or one that changes the
   * runner.
   */
  *#steps(defs: readonly CheckDefinition[], summary: ReloadSummary): Generator<void, void, undefined> {
    const next = new Map<string, CheckDefinition>();
    // Unchanged definitions were valid when applied: only the others are
    // checked. Which are unchanged is remembered for the steps below.
    const same = new Set<string>();
    for (let i = 0; i < defs.length; i++) {
      const def = defs[i];
      // Not an object at all: checkDefinition's TypeError says so.
      if (typeof def !== 'object' || def === null) checkDefinition(def, {});
      if (next.has(def.id)) throw new TypeError(`apply: two checks with id ${JSON.stringify(def.id)}`);
      next.set(def.id, def);
      const old = this.#applied.get(def.id);
      if (old !== undefined && sameDefinition(old, def)) same.add(def.id);
      else checkDefinition(def, {});
      if (i % STEP === STEP - 1) yield;
    }
    for (const id of [...this.#applied.keys()]) {
      if (next.has(id)) continue;
      this.runner.remove(id);
      this.#applied.delete(id);
      summary.removed.push(id);
      yield;
    }
    for (let i = 0; i < defs.length; i++) {
      const def = defs[i];
      if (same.has(def.id)) {
        summary.unchanged++;
        if (i % STEP === STEP - 1) yield;
        continue;
      }
      if (this.#applied.has(def.id)) {
        this.runner.remove(def.id);
        summary.changed.push(def.id);
      } else summary.added.push(def.id);
      this.runner.add(def);
      this.#applied.set(def.id, def);
      yield;
    }
  }
}
