// What a load of a checks file learned for the next one: per check, a hash
// of its JSON text as parsed (before the schema) and the hash of the
// definition it expanded to, and one hash of the file's `defaults` and
// `macros` as parsed. Whether a check is valid, and its definition, follow
// from its own text, `defaults` and `macros` alone (checks-file-check.ts): a
// reload that finds a check's text among the last load's, with the same
// `defaults` and `macros`, takes it as valid with that definition's hash,
// without validating or expanding it. The hashes are not made to withstand
// a search for collisions: a check taken as known that is then fetched is
// expanded and checked against the hash (StaleKnown), and one that is not
// fetched keeps the definition applied for the text it was taken for.
// Two Float64Arrays: 1.6 MB for 100,000 checks, outside the JS heap, sent to
// the loading thread as they are. And the SHA-256 of the file's bytes: a
// reload that reads the same bytes (logrotate's daily SIGHUP, a config push
// that changed nothing) need not parse them (run-reload.ts).
import { textHash } from './checks-digest';

export interface KnownChecks {
  /** textHash() of `{ defaults, macros }` as parsed; NaN matches nothing. */
  context: number;
  /** Per check of that load: textHash() of its text as parsed (NaN: never matched). */
  raw: Float64Array;
  /** Per check: definitionHash() of its definition. */
  defs: Float64Array;
  /** Hex SHA-256 of the bytes that load parsed ('' : none). */
  file: string;
}

/**
 * A check a load took as known turned out, once expanded, not to have the
 * definition the last load gave its text: two texts with one hash. Nothing
 * is applied; the reload is done again knowing nothing.
 */
export class StaleKnown extends TypeError {}

/** JSON text of parsed data, or null where it has none (a cycle, nesting too deep, a BigInt). */
export function jsonText(data: unknown): string | null {
  try {
    return JSON.stringify(data) ?? null;
  } catch {
    return null;
  }
}

/** The hash a KnownChecks keys a parsed value by: NaN where it has no JSON text or it holds a null value. */
export function parsedHash(data: unknown): number {
  const text = jsonText(data);
  return text === null ? NaN : textHash(text);
}

/** The context hash of a parsed file: its `defaults` and `macros`, as parsed. */
export function contextHash(data: { defaults?: unknown; macros?: unknown }): number {
  return parsedHash({ defaults: data.defaults, macros: data.macros });
}

/**
 * Raw hash to definition hash, from a last load whose context is `context`;
 * null when there is nothing to go by (no last load, another context).
 * A raw hash that two checks of that load shared (the same text twice: a
 * duplicate id, refused) maps to the first one's.
 */
export function knownDefinitions(known: KnownChecks | null | undefined, context: number): Map<number, number> | null {
  if (known === null || known === undefined || !(known.context === context)) return null;
  const map = new Map<number, number>();
  const { raw, defs } = known;
  const n = Math.min(raw.length, defs.length);
  for (let i = 0; i < n; i++) {
    // NaN keys would all be one key of a Map (SameValueZero): never stored.
    if (!Number.isNaN(raw[i]) && !map.has(raw[i])) map.set(raw[i], defs[i]);
  }
  return map;
}
