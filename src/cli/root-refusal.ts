// `noshell run` as root runs no check as root unless told to: like Nagios,
// which refuses to start as root, a daemon's plugins (often third-party
// scripts fed from config files) must not get root by default. A check
// escapes the refusal by naming a user (its own or in "defaults") whose uid
// is not 0; a group alone still leaves the plugin with uid 0.
import type { CheckDefinition } from '../check/runner';
import { actingUid } from '../privilege';
import { quoteName } from '../quote-text';

/** Ids of the checks that would run with uid 0, or [] when we are not root. */
export function checksRunningAsRoot(defs: readonly CheckDefinition[], ourUid = actingUid()): string[] {
  if (ourUid !== 0) return [];
  return defs.filter((d) => d.uid === undefined || d.uid === 0).map((d) => d.id);
}

export function rootRefusal(file: string, ids: readonly string[]): string {
  const shown = ids.slice(0, 5).map(quoteName).join(', ') + (ids.length > 5 ? `, … (${ids.length} in all)` : '');
  return `${file}: refusing to run checks as root: ${shown} would run as uid 0. ` +
    'Give them a "user" (and optionally "group"), per check or in "defaults", or pass --allow-root.';
}
