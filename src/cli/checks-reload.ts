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
  const kx = Object.keys(x);
  const ky = Object.keys(y);
  // The same keys in the same order (a definition loaded again from the same file): value by value.
  if (kx.length === ky.length) {
    let i = 0;
    while (i < kx.length && kx[i] === ky[i]) i++;
    if (i === kx.length) {
      for (const k of kx) if (!sameDefinition(x[k], y[k])) return false;
      return true;
    }
  }
  let defined = 0;
  for (const k of kx) {
    if (x[k] === undefined) continue;
    defined++;
    if (!Object.hasOwn(y, k) || !sameDefinition(x[k], y[k])) return false;
  }
  for (const k of ky) if (y[k] !== undefined) defined--;
  return defined === 0;
}

/** Checks compared (or passed over as unchanged) per step of an apply. */
const STEP = 32;

/** How long one slice of a sliced apply may hold the event loop, ms. */
export const RELOAD_SLICE_MS = 10;

/** A check as applied, and what the apply under way found of it. */
interface Applied {
  def: CheckDefinition;
  /** The apply that last found this id in its definitions (its token). */
  seenBy: object | null;
  /** Whether that apply found the definition unchanged. */
  same: boolean;
}

/**
 * What the runner holds, by id: each definition as applied. Kept, not
 * copied: the caller must not change a definition after applying it (the
 * CLI makes new ones from the file at every load).
 */
export class AppliedChecks {
  readonly #applied = new Map<string, Applied>();
  #slicing = 0;

  constructor(private readonly runner: CheckRunner) {}

  /** Makes the runner hold exactly `defs`; validates all before touching anything. */
  apply(defs: readonly CheckDefinition[]): ReloadSummary {
    this.#refuseNested();
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
    this.#refuseNested();
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

  /** One apply at a time: each marks the checks it finds, and a second would unmark the first's. */
  #refuseNested(): void {
    if (this.#slicing > 0) throw new Error('apply: another apply is under way');
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
   * runner. Each applied check is looked up once: the apply marks what it
   * finds on the check's own record (a Map and a Set of every id, built
   * again at each apply and asked six times a check, were ~2/3 of the
   * time of a reload of 100,000 checks with 1 % changed).
   */
  *#steps(defs: readonly CheckDefinition[], summary: ReloadSummary): Generator<void, void, undefined> {
    const token = {};
    // Ids not applied yet, to refuse a second of them; unchanged definitions
    // were valid when applied: only the others are checked.
    const added = new Set<string>();
    const found: (Applied | undefined)[] = new Array<Applied | undefined>(defs.length);
    for (let i = 0; i < defs.length; i++) {
      const def = defs[i];
      // Not an object at all: checkDefinition's TypeError says so.
      if (typeof def !== 'object' || def === null) checkDefinition(def, {});
      const old = this.#applied.get(def.id);
      if (old === undefined) {
        if (added.has(def.id)) throw new TypeError(`apply: two checks with id ${JSON.stringify(def.id)}`);
        added.add(def.id);
        checkDefinition(def, {});
      } else {
        if (old.seenBy === token) throw new TypeError(`apply: two checks with id ${JSON.stringify(def.id)}`);
        old.seenBy = token;
        old.same = sameDefinition(old.def, def);
        if (!old.same) checkDefinition(def, {});
      }
      found[i] = old;
      if (i % STEP === STEP - 1) yield;
    }
    const gone: string[] = [];
    for (const [id, a] of this.#applied) if (a.seenBy !== token) gone.push(id);
    for (const id of gone) {
      this.runner.remove(id);
      this.#applied.delete(id);
      summary.removed.push(id);
      yield;
    }
    for (let i = 0; i < defs.length; i++) {
      const def = defs[i];
      const old = found[i];
      if (old?.same === true) {
        summary.unchanged++;
        if (i % STEP === STEP - 1) yield;
        continue;
      }
      if (old !== undefined) {
        this.runner.remove(def.id);
        summary.changed.push(def.id);
        old.def = def;
      } else {
        summary.added.push(def.id);
        this.#applied.set(def.id, { def, seenBy: null, same: false });
      }
      this.runner.add(def);
      yield;
    }
  }
}
