// User and group names of a checks file turned into the uid, gid and
// supplementary groups each check runs with: looked up once per distinct
// (user, group) pair (checks-digest.ts), whatever number of checks share it.
import type { CheckDefinition } from '../check/runner';
import { quoteName } from '../quote-text';
import type { ChecksDigest } from './checks-digest';
import { UserLookup, type Identity } from './user-lookup';

/**
 * Each pair's identity, in the order of `digest.pairs`. Throws a TypeError
 * naming each check whose lookup failed, in file order.
 */
export async function resolvePairs(
  file: string, digest: ChecksDigest, lookup: Pick<UserLookup, 'resolve'> = new UserLookup(),
): Promise<Identity[]> {
  const found = await Promise.all(digest.pairs.map(async ({ user, group }): Promise<Identity | Error> => {
    try {
      return await lookup.resolve(user, group);
    } catch (err) {
      return err as Error;
    }
  }));
  if (!found.some((f) => f instanceof Error)) return found as Identity[];
  const problems: string[] = [];
  const { ids, pairOf, pairs } = digest;
  for (let i = 0; i < ids.length; i++) {
    const f = found[pairOf[i]];
    if (!(f instanceof Error)) continue;
    const field = pairs[pairOf[i]].user !== undefined && f.message.startsWith('user') ? 'user' : 'group';
    problems.push(`checks[${i}] (id ${quoteName(ids[i])}): field "${field}": ${f.message}`);
  }
  throw new TypeError(`${file}: invalid checks file:\n  ${problems.join('\n  ')}`);
}

/** The definition as it runs: with the identity's uid, gid and groups; itself when there are none (no copy). */
export function withIdentity(def: CheckDefinition, identity: Identity): CheckDefinition {
  return identity.uid === undefined && identity.gid === undefined && identity.groups === undefined ? def : { ...def, ...identity };
}
