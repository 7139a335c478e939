// Option objects built from maybe-undefined values (parsed arguments, other
// options): with exactOptionalPropertyTypes an explicit undefined is not an
// absent option, and a resolver that lays options over defaults
// (`{ ...defaults, ...options }`) would let it overwrite the default (issue 17).

/** T with each key whose value may be undefined made optional and never undefined. */
export type DefinedFields<T> =
  { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } &
  { [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined> };

/** A copy of `fields` without the keys whose value is undefined. */
export function definedFields<T extends object>(fields: T): DefinedFields<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out as DefinedFields<T>;
}
