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

/** JSON with object keys sorted, so two equal definitions give one string. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

/** What the runner holds, by id: the canonical form of each definition. */
export class AppliedChecks {
  readonly #applied = new Map<string, string>();

  constructor(private readonly runner: CheckRunner) {}

  /** Makes the runner hold exactly `defs`; validates all before touching anything. */
  apply(defs: readonly CheckDefinition[]): ReloadSummary {
    for (const def of defs) checkDefinition(def, {});
    const summary: ReloadSummary = { added: [], removed: [], changed: [], unchanged: 0 };
    const next = new Map(defs.map((d) => [d.id, canonical(d)]));
    for (const id of [...this.#applied.keys()]) {
      if (next.has(id)) continue;
      this.runner.remove(id);
      this.#applied.delete(id);
      summary.removed.push(id);
    }
    for (const def of defs) {
      const key = next.get(def.id)!;
      const old = this.#applied.get(def.id);
      if (old === key) {
        summary.unchanged++;
        continue;
      }
      if (old !== undefined) {
        this.runner.remove(def.id);
        summary.changed.push(def.id);
      } else summary.added.push(def.id);
      this.runner.add(def);
      this.#applied.set(def.id, key);
    }
    return summary;
  }
}
