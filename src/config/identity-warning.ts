// `user:`/`group:` in a checks file need root: switching to another user, and
// even to one's own (setgroups, to drop or set supplementary groups), takes
// CAP_SETUID/CAP_SETGID. Run by a normal user, every such check would end
// UNKNOWN with EPERM at setgroups; `noshell run --check` and the start of
// `noshell run` say so once per user/group pair instead (issue 20).
import { quoteName } from '../util/quote-text';
import { countOf } from '../util/count-text';
import type { ChecksDigest } from './checks-digest';

/** Lines to print (without newline); none when the process may switch users. */
export function identityWarnings(file: string, digest: ChecksDigest, euid: number | undefined = process.geteuid?.()): string[] {
  if (euid === undefined || euid === 0) return [];
  // The checks of each pair that names a user or group, pairs in the order first seen.
  const asks = digest.pairs.map(({ user, group }) => (user === undefined && group === undefined ? null : { user, group, ids: [] as string[] }));
  for (let i = 0; i < digest.ids.length; i++) asks[digest.pairOf[i]]?.ids.push(digest.ids[i]);
  const lines: string[] = [];
  for (const ask of asks) {
    if (ask === null) continue;
    const { user, group, ids } = ask;
    const who = [user !== undefined ? `user ${quoteName(user)}` : '', group !== undefined ? `group ${quoteName(group)}` : '']
      .filter(Boolean).join(', ');
    const shown = ids.slice(0, 5).map(quoteName).join(', ') + (ids.length > 5 ? ', …' : '');
    lines.push(`${file}: warning: ${countOf(ids.length, 'check')} (${shown}) ${ids.length === 1 ? 'asks' : 'ask'} to run as ${who}; ` +
      `this process (uid ${euid}) is not root and cannot switch users, so each would end UNKNOWN (EPERM at setgroups). ` +
      'Run noshell as root, or leave user/group out to run the checks as yourself.');
  }
  return lines;
}
