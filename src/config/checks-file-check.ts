// One check of a checks file, validated, made into its definition: the
// defaults merged in, macros expanded (checks-file.ts has the file's shape).
import type { CheckDefinition } from '../check/runner/runner';
import { quoteName } from '../util/quote-text';
import type { FileCheck } from './checks-file-shape';
import type { CheckData, ChecksFileData } from './checks-schema';
import { expandMacros, MacroError } from './macros';

/** `checks[2] (id "disk")`: where a problem is, in the words of the schema's messages. */
export function checkName(id: string, i: number): string {
  return `checks[${i}] (id ${quoteName(id)})`;
}

/** Fields of a check that are not options of its definition. */
const NOT_OPTIONS: ReadonlySet<string> = new Set(['id', 'command', 'args', 'user', 'group']);

type Defaults = NonNullable<ChecksFileData['defaults']>;

/**
 * `{ id, command, ...defaults and the check's own options }`, keys in the
 * order of `{ ...defaults, ...c }`. Assigned key by key: object rest and
 * spread of the merged check took ~4 µs a check (400 ms of a 100,000-check
 * reload), this ~0.5. Both objects come out of the schema, which keeps only
 * its own fields (never `__proto__`).
 */
function withDefaults(defaults: Defaults, c: CheckData, command: string | string[]): CheckDefinition {
  const definition: Record<string, unknown> = { id: c.id, command };
  for (const k of Object.keys(defaults)) if (!NOT_OPTIONS.has(k)) definition[k] = (defaults as Record<string, unknown>)[k];
  for (const k of Object.keys(c)) if (!NOT_OPTIONS.has(k)) definition[k] = (c as Record<string, unknown>)[k];
  // Limits merge by name: a check's { as } adds to the defaults' { nofile, core }.
  if (defaults.rlimits !== undefined && c.rlimits !== undefined) {
    definition.rlimits = Object.assign({}, defaults.rlimits, c.rlimits);
  }
  return definition as unknown as CheckDefinition;
}

/** The user and group a validated check runs as: its own, else the defaults' (names, or ids as strings). */
export function userGroupOf(c: CheckData, defaults: Defaults): { user: string | undefined; group: string | undefined } {
  return {
    user: Object.hasOwn(c, 'user') ? c.user : defaults.user,
    group: Object.hasOwn(c, 'group') ? c.group : defaults.group,
  };
}

/** Check `i`'s definition, or the problem that keeps it from having one (a line of the file's TypeError). */
export function expandCheck(c: CheckData, i: number, defaults: Defaults, macros: ReadonlyMap<string, string>): FileCheck | string {
  const { command, args = [] } = c;
  let expanded: string | string[];
  try {
    expanded = typeof command === 'string'
      ? expandMacros(command, macros, args)
      : command.map((word) => expandMacros(word, macros, args));
  } catch (err) {
    if (!(err instanceof MacroError)) throw err;
    return `${checkName(c.id, i)}: field "command": ${err.message}`;
  }
  const definition = withDefaults(defaults, c, expanded);
  if (definition.interval === undefined) return `${checkName(c.id, i)}: field "interval" is missing (give it here or in "defaults")`;
  const fileCheck: FileCheck = { definition };
  const { user, group } = userGroupOf(c, defaults);
  if (user !== undefined) fileCheck.user = user;
  if (group !== undefined) fileCheck.group = group;
  return fileCheck;
}
