// User and group names of a checks file turned into the uid, gid and
// supplementary groups each check runs with: looked up once per distinct
// (user, group) pair (checks-digest.ts), whatever number of checks share it.
import type { CheckDefinition } from '../check/runner/runner';
import { quoteName } from '../util/quote-text';
import type { ChecksDigest } from './checks-digest';
import { UserLookup, type Identity } from './user-lookup';

/**
 * Checks named in a lookup error; the others are counted. A directory
 * that is down fails every check of its users: 100,000 lines of them took
 * ~0.4 s to write, and said nothing the first thousand do not.
 */
export const LISTED_LOOKUP_ERRORS = 1000;

/**
 * Pairs looked up at once. Each is up to three getent runs (group, passwd,
 * initgroups): a file of 100,000 distinct pairs started all of them at once.
 */
export const LOOKUPS_AT_ONCE = 8;

/**
 * Each pair's identity, in the order of `digest.pairs`, LOOKUPS_AT_ONCE
 * pairs at a time. Throws a TypeError naming each check whose lookup
 * failed, in file order (at most LISTED_LOOKUP_ERRORS of them, then how
 * many more), written with a turn of the event loop now and then.
 * Aborting `signal` starts no more lookups and rejects with its reason.
 */
export async function resolvePairs(
  file: string, digest: ChecksDigest, lookup: Pick<UserLookup, 'resolve'> = new UserLookup(), signal?: AbortSignal,
): Promise<Identity[]> {
  const { pairs } = digest;
  const found = new Array<Identity | Error>(pairs.length);
  let next = 0;
  const lookups = async () => {
    while (next < pairs.length && signal?.aborted !== true) {
      const p = next++;
      try {
        found[p] = await lookup.resolve(pairs[p].user, pairs[p].group);
      } catch (err) {
        found[p] = err as Error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(LOOKUPS_AT_ONCE, pairs.length) }, lookups));
  signal?.throwIfAborted();
  if (!found.some((f) => f instanceof Error)) return found as Identity[];
  const problems: string[] = [];
  const { ids, pairOf } = digest;
  let failed = 0;
  for (let i = 0; i < ids.length; i++) {
    if ((i & 2047) === 2047) await new Promise<void>((resolve) => setImmediate(resolve));
    const f = found[pairOf[i]];
    if (!(f instanceof Error) || ++failed > LISTED_LOOKUP_ERRORS) continue;
    const field = pairs[pairOf[i]].user !== undefined && f.message.startsWith('user') ? 'user' : 'group';
    problems.push(`checks[${i}] (id ${quoteName(ids[i])}): field "${field}": ${f.message}`);
  }
  if (failed > LISTED_LOOKUP_ERRORS) problems.push(`… and ${failed - LISTED_LOOKUP_ERRORS} more checks whose user or group could not be looked up`);
  throw new TypeError(`${file}: invalid checks file:\n  ${problems.join('\n  ')}`);
}

/** The definition as it runs: with the identity's uid, gid and groups; itself when there are none (no copy). */
export function withIdentity(def: CheckDefinition, identity: Identity): CheckDefinition {
  return identity.uid === undefined && identity.gid === undefined && identity.groups === undefined ? def : { ...def, ...identity };
}
