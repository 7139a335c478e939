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
 * A definition as text with object keys sorted, so two equal definitions give
 * one string. JSON-like, written by hand: JSON.stringify with a replacer that
 * sorts keys cost ~11 µs per definition, a second of a 100,000-check reload.
 * Keys whose value is undefined are left out, as JSON.stringify does.
 */
function canonical(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || typeof value !== 'object') return typeof value === 'bigint' ? `${value}n` : String(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonical(value[i]);
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  let out = '{';
  for (const k of Object.keys(obj).sort()) {
    if (obj[k] === undefined) continue;
    out += `${out === '{' ? '' : ','}${JSON.stringify(k)}:${canonical(obj[k])}`;
  }
  return `${out}}`;
}

/** How long one slice of a sliced apply may hold the event loop, ms. */
export const RELOAD_SLICE_MS = 10;

/** What the runner holds, by id: the canonical form of each definition. */
export class AppliedChecks {
  readonly #applied = new Map<string, string>();

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
    const summary: ReloadSummary = { added: [], removed: [], changed: [], unchanged: 0 };
    const step = this.#steps(defs, summary);
    for (;;) {
      const until = performance.now() + sliceMs;
      let done = false;
      // The clock is read every 32 steps (a step is a few µs).
      for (let n = 0; !done; n++) {
        done = step.next().done === true;
        if ((n & 31) === 31 && performance.now() >= until) break;
      }
      if (done) return summary;
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (stopping()) {
        void step.return(undefined);
        return summary;
      }
    }
  }

  /** The work of an apply, one check per step. */
  *#steps(defs: readonly CheckDefinition[], summary: ReloadSummary): Generator<void, void, undefined> {
    const next = new Map<string, string>();
    for (const def of defs) {
      // Not an object at all: checkDefinition's TypeError says so.
      if (typeof def !== 'object' || def === null) checkDefinition(def, {});
      next.set(def.id, canonical(def));
      yield;
    }
    // Unchanged definitions were valid when applied: only the others are checked.
    for (const def of defs) {
      if (this.#applied.get(def.id) !== next.get(def.id)) checkDefinition(def, {});
      yield;
    }
    for (const id of [...this.#applied.keys()]) {
      if (next.has(id)) continue;
      this.runner.remove(id);
      this.#applied.delete(id);
      summary.removed.push(id);
      yield;
    }
    for (const def of defs) {
      const key = next.get(def.id)!;
      const old = this.#applied.get(def.id);
      if (old === key) {
        summary.unchanged++;
        yield;
        continue;
      }
      if (old !== undefined) {
        this.runner.remove(def.id);
        summary.changed.push(def.id);
      } else summary.added.push(def.id);
      this.runner.add(def);
      this.#applied.set(def.id, key);
      yield;
    }
  }
}
