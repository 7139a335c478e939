// User and group names of a checks file, resolved through the system's
// database (NSS: /etc/passwd, LDAP, systemd-userdb… whatever nsswitch.conf
// says) with getent, run once per name at load by noshell's own execFile.
// Node has no getpwnam(); getent is glibc's own front-end to it, so a name
// means here what it means to login(1) and to Nagios' drop_privileges().
import { existsSync } from 'node:fs';
import { execFile } from '../process/exec';

export interface Identity {
  uid?: number;
  gid?: number;
  /** Supplementary groups, as initgroups(user, gid) would set them. */
  groups?: number[];
}

const NUMERIC = /^[0-9]{1,10}$/;

// By absolute path: `noshell run` is what decides whether checks may run as
// root, so the PATH it was started with must not pick the program that answers.
const GETENT = ['/usr/bin/getent', '/bin/getent'].find((p) => existsSync(p)) ?? '/usr/bin/getent';

/** getent's fields for `key` in `database`, or null when it has no such entry (exit 2). */
async function getent(database: string, key: string): Promise<string[] | null> {
  // `--` and the schema's name pattern keep a key from being read as an option.
  const r = await execFile(GETENT, [database, '--', key], { reject: false, timeout: 10_000, encoding: 'utf8' });
  if (r.exitCode === 2) return null;
  if (r.exitCode !== 0) {
    throw new TypeError(`getent ${database} ${key} failed (exit ${r.exitCode ?? r.signal}): ${String(r.stderr).trim()}`);
  }
  const line = String(r.stdout).split('\n', 1)[0];
  return database === 'initgroups' ? line.trim().split(/\s+/) : line.split(':');
}

function id(text: string | undefined, what: string): number {
  const n = Number(text);
  if (text === undefined || !NUMERIC.test(text) || n > 0xfffffffe) throw new TypeError(`${what}: bad id ${JSON.stringify(text)} from getent`);
  return n;
}

/** Looks names up once each, however many checks use them. */
export class UserLookup {
  readonly #cache = new Map<string, Promise<Identity>>();

  /** The identity for a check's `user` and `group` (either may be absent). */
  resolve(user: string | undefined, group: string | undefined): Promise<Identity> {
    if (user === undefined && group === undefined) return Promise.resolve({});
    const key = `${user ?? ''}\0${group ?? ''}`;
    let p = this.#cache.get(key);
    if (p === undefined) {
      p = resolveIdentity(user, group);
      this.#cache.set(key, p);
    }
    return p;
  }
}

async function resolveGroup(group: string): Promise<number> {
  const entry = await getent('group', group);
  if (entry !== null) return id(entry[2], `group ${group}`);
  if (NUMERIC.test(group)) return Number(group);
  throw new TypeError(`group ${JSON.stringify(group)}: no such group (getent group)`);
}

async function resolveIdentity(user: string | undefined, group: string | undefined): Promise<Identity> {
  const gid = group === undefined ? undefined : await resolveGroup(group);
  if (user === undefined) return gid === undefined ? {} : { gid };
  const entry = await getent('passwd', user);
  if (entry === null) {
    if (!NUMERIC.test(user)) throw new TypeError(`user ${JSON.stringify(user)}: no such user (getent passwd)`);
    // A uid the database does not know: no primary group, no memberships.
    if (gid === undefined) throw new TypeError(`user ${user} is not in the user database: give a group too`);
    return { uid: Number(user), gid, groups: [] };
  }
  const uid = id(entry[2], `user ${user}`);
  const primary = gid ?? id(entry[3], `user ${user}`);
  // initgroups(name, gid): the groups the database lists the user in, plus gid.
  const members = (await getent('initgroups', entry[0])) ?? [entry[0]];
  const groups = new Set([primary]);
  for (const g of members.slice(1)) groups.add(id(g, `groups of ${user}`));
  return { uid, gid: primary, groups: [...groups] };
}
