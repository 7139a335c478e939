// `user:`/`group:` in a checks file need root: switching to another user, and
// even to one's own (setgroups, to drop or set supplementary groups), takes
// CAP_SETUID/CAP_SETGID. Run by a normal user, every such check would end
// UNKNOWN with EPERM at setgroups; `noshell run --check` and the start of
// `noshell run` say so once per user/group pair instead (issue 20).
import { quoteName } from '../quote-text';
import type { ChecksFile } from './checks-file';

/** Lines to print (without newline); none when the process may switch users. */
export function identityWarnings(
  file: string, checks: ChecksFile['checks'], euid: number | undefined = process.geteuid?.(),
): string[] {
  if (euid === undefined || euid === 0) return [];
  const asks = new Map<string, { user: string | undefined; group: string | undefined; ids: string[] }>();
  for (const c of checks) {
    if (c.user === undefined && c.group === undefined) continue;
    const key = `${c.user ?? ''}\0${c.group ?? ''}`;
    const entry = asks.get(key) ?? { user: c.user, group: c.group, ids: [] };
    entry.ids.push(c.definition.id);
    asks.set(key, entry);
  }
  const lines: string[] = [];
  for (const { user, group, ids } of asks.values()) {
    const who = [user !== undefined ? `user ${quoteName(user)}` : '', group !== undefined ? `group ${quoteName(group)}` : '']
      .filter(Boolean).join(', ');
    const shown = ids.slice(0, 5).map(quoteName).join(', ') + (ids.length > 5 ? ', …' : '');
    lines.push(`${file}: warning: ${ids.length} check${ids.length === 1 ? '' : 's'} (${shown}) ask to run as ${who}; ` +
      `this process (uid ${euid}) is not root and cannot switch users, so each would end UNKNOWN (EPERM at setgroups). ` +
      'Run noshell as root, or leave user/group out to run the checks as yourself.');
  }
  return lines;
}
