// Applying a (re)loaded checks file to a running CheckRunner: checks whose id
// and whole definition are unchanged are left alone, so they keep their next
// run time, attempt and state; new ids are added, missing ones removed, and
// changed ones replaced (a run in progress finishes first: the runner never
// runs two of one id at once). A reload may give its checks by key
// (KeyedChecks): a check whose key is the applied one's comes without its
// definition, and only the others' definitions are loaded and compared.
import { checkDefinition } from '../check/model/definition';
import type { CheckDefinition, CheckRunner } from '../check/runner/runner';
import { inSlices, RELOAD_SLICE_MS } from '../util/in-slices';
import { sameDefinition } from './same-definition';

export interface ReloadSummary {
  added: string[];
  removed: string[];
  changed: string[];
  unchanged: number;
}

/** Each check's id and key: the hash of its definition (checks-digest.ts) and the identity it runs as. */
export interface CheckKeys {
  ids: readonly string[];
  /** NaN: no key (the check is compared by its definition). */
  hashes: ArrayLike<number>;
  /** The identity's text; the checks of one identity may share the string. */
  who: readonly string[];
}

/** Checks by key; a definition may be left out (undefined) where the key is the applied check's. */
export interface KeyedChecks extends CheckKeys {
  defs: readonly (CheckDefinition | undefined)[];
}

/** Checks compared (or passed over as unchanged) per step of an apply. */
const STEP = 32;

/** A check as applied, and what the apply under way found of it. */
interface Applied {
  def: CheckDefinition;
  /** Its key as applied (NaN and '' when applied without one). */
  hash: number;
  who: string;
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

  /** Makes the runner hold exactly `checks` (definitions, or by key); validates all before touching anything. */
  apply(checks: readonly CheckDefinition[] | KeyedChecks): ReloadSummary {
    this.#refuseNested();
    const summary: ReloadSummary = { added: [], removed: [], changed: [], unchanged: 0 };
    for (const step = this.#steps(checks, summary); !step.next().done;);
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
    checks: readonly CheckDefinition[] | KeyedChecks, stopping: () => boolean = () => false, sliceMs = RELOAD_SLICE_MS,
  ): Promise<ReloadSummary> {
    this.#refuseNested();
    this.#slicing++;
    try {
      const summary: ReloadSummary = { added: [], removed: [], changed: [], unchanged: 0 };
      await inSlices(this.#steps(checks, summary), stopping, sliceMs);
      return summary;
    } finally {
      this.#slicing--;
    }
  }

  /**
   * Indexes (ascending) of the checks whose definitions an apply of `keys`
   * needs: ids not applied, and those whose key differs from the applied
   * one's. In slices of at most ~sliceMs.
   */
  async wanted(keys: CheckKeys, sliceMs = RELOAD_SLICE_MS): Promise<Uint32Array> {
    const out: number[] = [];
    const applied = this.#applied;
    const { ids, hashes, who } = keys;
    await inSlices((function* () {
      for (let i = 0; i < ids.length; i++) {
        const old = applied.get(ids[i]);
        if (old === undefined || old.hash !== hashes[i] || old.who !== who[i]) out.push(i);
        if (i % STEP === STEP - 1) yield;
      }
    })(), () => false, sliceMs);
    return Uint32Array.from(out);
  }

  /** Whether an applyInSlices() is under way: the runner's checks are changing, a few thousand at a time. */
  get applying(): boolean {
    return this.#slicing > 0;
  }

  /** One apply at a time: each marks the checks it finds, and a second would unmark the first's. */
  #refuseNested(): void {
    if (this.#slicing > 0) throw new Error('apply: another apply is under way');
  }

  /**
   * The work of an apply, up to STEP checks per step (a resume of this
   * generator per check was ~20 % of the apply), or one that changes the
   * runner. Each applied check is looked up once: the apply marks what it
   * finds on the check's own record (a Map and a Set of every id, built
   * again at each apply and asked six times a check, were ~2/3 of the
   * time of a reload of 100,000 checks with 1 % changed).
   */
  *#steps(checks: readonly CheckDefinition[] | KeyedChecks, summary: ReloadSummary): Generator<void, void, undefined> {
    const keyed = isKeyed(checks) ? checks : null;
    const defs = keyed?.defs ?? (checks as readonly CheckDefinition[]);
    const token = {};
    // Ids not applied yet, to refuse a second of them; unchanged definitions
    // were valid when applied: only the others are checked.
    const added = new Set<string>();
    const found: (Applied | undefined)[] = new Array<Applied | undefined>(defs.length);
    for (let i = 0; i < defs.length; i++) {
      const def = defs[i];
      const id = keyed === null ? idOf(def) : keyed.ids[i];
      if (keyed !== null && def !== undefined && (typeof def !== 'object' || def === null || def.id !== id)) {
        throw new TypeError(`apply: checks[${i}] is not the definition of id ${JSON.stringify(id)}`);
      }
      const old = this.#applied.get(id);
      if (old === undefined) {
        if (added.has(id)) throw new TypeError(`apply: two checks with id ${JSON.stringify(id)}`);
        if (def === undefined) throw new TypeError(`apply: no definition of id ${JSON.stringify(id)}, which is new`);
        added.add(id);
        checkDefinition(def, {});
      } else {
        if (old.seenBy === token) throw new TypeError(`apply: two checks with id ${JSON.stringify(id)}`);
        old.seenBy = token;
        const sameKey = keyed !== null && old.hash === keyed.hashes[i] && old.who === keyed.who[i];
        if (def === undefined && !sameKey) throw new TypeError(`apply: no definition of id ${JSON.stringify(id)}, whose key changed`);
        // A definition given is compared even under the same key: the key stands in only for one left out.
        old.same = def === undefined || sameDefinition(old.def, def);
        if (!old.same) checkDefinition(def!, {});
      }
      found[i] = old;
      if (i % STEP === STEP - 1) yield;
    }
    // Every applied check, in steps too: one pass over 100,000 entries (an [id, record] array
    // made for each) was a single step of 30-40 ms with the collector it set off.
    const gone: string[] = [];
    let seen = 0;
    for (const a of this.#applied.values()) {
      if (a.seenBy !== token) gone.push(a.def.id);
      if (++seen % (STEP * 8) === 0) yield;
    }
    for (const id of gone) {
      this.runner.remove(id);
      this.#applied.delete(id);
      summary.removed.push(id);
      yield;
    }
    for (let i = 0; i < defs.length; i++) {
      const old = found[i];
      const hash = keyed === null ? NaN : keyed.hashes[i];
      const who = keyed === null ? '' : keyed.who[i];
      if (old?.same === true) {
        summary.unchanged++;
        // Equal by value under another key (its keys reordered): the new key, so that the next apply need not compare it.
        old.hash = hash;
        old.who = who;
        if (i % STEP === STEP - 1) yield;
        continue;
      }
      const def = defs[i]!;
      if (old !== undefined) {
        // Its last result and state series stay until the new definition's first result.
        this.runner.replace(def);
        summary.changed.push(def.id);
        old.def = def;
        old.hash = hash;
        old.who = who;
      } else {
        summary.added.push(def.id);
        this.#applied.set(def.id, { def, hash, who, seenBy: null, same: false });
        this.runner.add(def);
      }
      yield;
    }
  }
}

function isKeyed(checks: readonly CheckDefinition[] | KeyedChecks): checks is KeyedChecks {
  return !Array.isArray(checks);
}

/** A definition's id; not an object at all is checkDefinition's TypeError. */
function idOf(def: CheckDefinition | undefined): string {
  if (typeof def !== 'object' || def === null) checkDefinition(def as unknown as CheckDefinition, {});
  return def!.id;
}
