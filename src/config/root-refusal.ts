// `noshell run` as root runs no check as root unless told to: like Nagios,
// which refuses to start as root, a daemon's plugins (often third-party
// scripts fed from config files) must not get root by default. A check
// escapes the refusal by naming a user (its own or in "defaults") whose uid
// is not 0; a group alone still leaves the plugin with uid 0.
import { actingUid } from '../util/privilege';
import { quoteName } from '../util/quote-text';
import type { ChecksDigest } from './checks-digest';
import type { Identity } from './user-lookup';

/** Ids of the checks that would run with uid 0 (their pairs' identities given), or [] when we are not root. */
export function checksRunningAsRoot(digest: ChecksDigest, identities: readonly Identity[], ourUid = actingUid()): string[] {
  if (ourUid !== 0) return [];
  const root = identities.map((i) => i.uid === undefined || i.uid === 0);
  return digest.ids.filter((_, i) => root[digest.pairOf[i]]);
}

export function rootRefusal(file: string, ids: readonly string[]): string {
  const shown = ids.slice(0, 5).map(quoteName).join(', ') + (ids.length > 5 ? `, … (${ids.length} in all)` : '');
  return `${file}: refusing to run checks as root: ${shown} would run as uid 0. ` +
    'Give them a "user" (and optionally "group"), per check or in "defaults", or pass --allow-root.';
}
