// uid/gid/groups: which identity a child runs as. The child drops its
// supplementary groups (or takes `groups`), then sets gid, then uid, on the
// clone(CLONE_VFORK) path; posix_spawn cannot change credentials.
import { NativeFlag } from '../binding/binding';
import { describe } from '../util/validate';

export interface Credentials {
  /** NativeFlag.SetUid | SetGid | SetGroups bits. */
  flags: number;
  uid: number;
  gid: number;
  /** Supplementary groups, or null to clear them. */
  groups: Uint32Array | null;
}

function checkId(value: unknown, option: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0xfffffffe) {
    throw new TypeError(`${option} must be a non-negative integer id, got ${describe(value)}`);
  }
  return value;
}

/**
 * `uid` needs `gid`: a child given only a uid would keep the parent's group
 * (root's group 0, usually) — the identity it runs as must be stated whole.
 * Supplementary groups are cleared unless `groups` lists them; a child that
 * cannot drop them (setgroups fails) is a SpawnError, never a child that
 * quietly keeps the parent's groups.
 */
const NO_CREDENTIALS: Credentials = Object.freeze({ flags: 0, uid: 0, gid: 0, groups: null });

export function normalizeCredentials(uid: unknown, gid: unknown, groups: unknown): Credentials {
  // The usual spawn changes no identity: no object per call on the spawn path.
  if (uid === undefined && gid === undefined && groups === undefined) return NO_CREDENTIALS;
  let flags = 0;
  const out: Credentials = { flags, uid: 0, gid: 0, groups: null };
  if (uid !== undefined) {
    out.uid = checkId(uid, 'uid');
    if (gid === undefined) {
      throw new TypeError('uid needs gid: give the group the child runs as too (and groups for supplementary ones)');
    }
    flags |= NativeFlag.SetUid;
  }
  if (gid !== undefined) {
    out.gid = checkId(gid, 'gid');
    flags |= NativeFlag.SetGid;
  }
  if (groups !== undefined) {
    if (!Array.isArray(groups)) throw new TypeError(`groups must be an array of group ids, got ${describe(groups)}`);
    if (gid === undefined) throw new TypeError('groups needs gid (and uid): they are set together');
    // The kernel's NGROUPS_MAX.
    if (groups.length > 65536) throw new RangeError(`groups: at most 65536 groups, got ${groups.length}`);
    out.groups = Uint32Array.from(groups, (g, i) => checkId(g, `groups[${i}]`));
    flags |= NativeFlag.SetGroups;
  }
  out.flags = flags;
  return out;
}
