// What the child runs under besides its user: resource limits (setrlimit),
// nice and a cgroup, set in the child before execve. The public types, and
// their validation into the setup array the native side takes
// (native/napi/child-setup.h). A limit that cannot be applied fails the
// spawn before the program runs (SpawnError at 'setrlimit', 'setpriority'
// or 'cgroup'); nothing here is best effort.
import { parseDuration } from '../util/duration';
import { quoteText } from '../util/quote-text';
import { describe } from '../util/validate';

/** setrlimit(2) resources by their names in `ulimit` and prlimit(1), without RLIMIT_. */
export type RlimitName =
  | 'as' | 'core' | 'cpu' | 'data' | 'fsize' | 'locks' | 'memlock' | 'msgqueue'
  | 'nice' | 'nofile' | 'nproc' | 'rss' | 'rtprio' | 'rttime' | 'sigpending' | 'stack';

/**
 * A limit's value: a whole number (bytes, seconds for `cpu`, µs for
 * `rttime`, a count for the rest), `Infinity` or `'unlimited'`; byte limits
 * also take `'512K'`, `'64M'`, `'2G'`, `'1T'` (powers of 1024), and `cpu`
 * a duration (`'90s'`, `'5m'`).
 */
export type RlimitAmount = number | string;

/** One number sets both limits (as systemd's LimitNOFILE=); an object sets
 * either, keeping the other as the child inherits it. */
export type RlimitValue = RlimitAmount | { readonly soft?: RlimitAmount; readonly hard?: RlimitAmount };

export type Rlimits = { readonly [K in RlimitName]?: RlimitValue };

type Unit = 'bytes' | 'seconds' | 'count';

/** RLIMIT_* numbers of Linux on x86_64 and arm64 (asm-generic/resource.h). */
const RESOURCES: ReadonlyMap<string, { id: number; unit: Unit }> = new Map([
  ['cpu', { id: 0, unit: 'seconds' }], ['fsize', { id: 1, unit: 'bytes' }], ['data', { id: 2, unit: 'bytes' }],
  ['stack', { id: 3, unit: 'bytes' }], ['core', { id: 4, unit: 'bytes' }], ['rss', { id: 5, unit: 'bytes' }],
  ['nproc', { id: 6, unit: 'count' }], ['nofile', { id: 7, unit: 'count' }], ['memlock', { id: 8, unit: 'bytes' }],
  ['as', { id: 9, unit: 'bytes' }], ['locks', { id: 10, unit: 'count' }], ['sigpending', { id: 11, unit: 'count' }],
  ['msgqueue', { id: 12, unit: 'bytes' }], ['nice', { id: 13, unit: 'count' }], ['rtprio', { id: 14, unit: 'count' }],
  ['rttime', { id: 15, unit: 'count' }],
] as const);

/** The names, for messages and the CLI. */
export const RLIMIT_NAMES: readonly string[] = [...RESOURCES.keys()].sort();

const UNLIMITED = -1;
const KEEP = -2;
const SCALE = new Map([['k', 2 ** 10], ['m', 2 ** 20], ['g', 2 ** 30], ['t', 2 ** 40]]);

function digitsEnd(text: string): number {
  let end = 0;
  while (end < text.length && text.charCodeAt(end) >= 48 && text.charCodeAt(end) <= 57) end++;
  return end;
}

/** `digits[K|M|G|T]` (any case) → bytes; null if the text is not that. */
function parseSize(text: string): number | null {
  const end = digitsEnd(text);
  if (end === 0 || end < text.length - 1) return null;
  const scale = end === text.length ? 1 : SCALE.get(text[end].toLowerCase());
  return scale === undefined ? null : Number(text.slice(0, end)) * scale;
}

function amount(value: unknown, unit: Unit, what: string): number {
  if (value === Infinity || value === 'unlimited' || value === 'infinity') return UNLIMITED;
  let n: number | null = null;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string') {
    const t = value.trim();
    if (unit === 'bytes') n = parseSize(t);
    else if (unit === 'seconds') {
      const ms = parseDuration(t, what, 's');
      if (ms % 1000 !== 0) throw new RangeError(`${what} is in whole seconds, got ${quoteText(value)}`);
      n = ms / 1000;
    } else if (t.length > 0 && digitsEnd(t) === t.length) {
      n = Number(t);
    }
  }
  if (n === null || !Number.isSafeInteger(n) || n < 0) {
    const forms = unit === 'bytes' ? ", or a size like '64M'" : unit === 'seconds' ? ", or a duration like '90s'" : '';
    throw new TypeError(`${what} must be a whole number ≥ 0, Infinity or 'unlimited'${forms}, got ${describe(value)}`);
  }
  return n;
}

/**
 * Checks `rlimits` and gives its (resource, soft, hard) triples, soft/hard
 * -1 for unlimited and -2 for "as inherited". TypeError for an unknown
 * name or a bad value, RangeError for a soft limit above its hard one.
 */
export function normalizeRlimits(value: unknown, option = 'rlimits'): number[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${option} must be an object like { nofile: 1024, as: '512M' }, got ${describe(value)}`);
  }
  const out: number[] = [];
  for (const [name, v] of Object.entries(value)) {
    const r = RESOURCES.get(name);
    if (r === undefined) {
      throw new TypeError(`${option}: unknown limit ${quoteText(name)} (known: ${RLIMIT_NAMES.join(', ')})`);
    }
    const what = `${option}.${name}`;
    let soft: number;
    let hard: number;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      for (const key of Object.keys(v as object)) {
        if (key !== 'soft' && key !== 'hard') throw new TypeError(`${what}: unknown key ${quoteText(key)} (soft, hard)`);
      }
      const o = v as { soft?: unknown; hard?: unknown };
      if (o.soft === undefined && o.hard === undefined) throw new TypeError(`${what} needs soft, hard or both`);
      soft = o.soft === undefined ? KEEP : amount(o.soft, r.unit, `${what}.soft`);
      hard = o.hard === undefined ? KEEP : amount(o.hard, r.unit, `${what}.hard`);
    } else {
      if (v === undefined) continue;
      soft = hard = amount(v, r.unit, what);
    }
    if (soft !== KEEP && hard >= 0 && (soft === UNLIMITED || soft > hard)) {
      throw new RangeError(`${what}: soft limit ${soft === UNLIMITED ? 'unlimited' : soft} is above the hard limit ${hard}`);
    }
    out.push(r.id, soft, hard);
  }
  return out;
}

/** nice(1)'s range. */
export function normalizeNice(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < -20 || value > 19) {
    throw new TypeError(`nice must be a whole number from -20 to 19, got ${describe(value)}`);
  }
  return value;
}

/** An absolute path (a cgroup v2 directory; the native side checks it is one). */
export function normalizeCgroup(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.charCodeAt(0) !== 47 || value.includes('\0')) {
    throw new TypeError(`cgroup must be the absolute path of a cgroup v2 directory, got ${describe(value)}`);
  }
  return value;
}

/** The native setup array: [deathSignal, nice, pgid to join (0: none), n, (resource, soft, hard) × n]. */
export function childSetup(deathSignal: number, nice: number, rlimits: readonly number[], pgid = 0): Float64Array {
  const a = new Float64Array(4 + rlimits.length);
  a[0] = deathSignal;
  a[1] = nice;
  a[2] = pgid;
  a[3] = rlimits.length / 3;
  a.set(rlimits, 4);
  return a;
}

/**
 * The command line's form, `nofile=1024,as=512M,core=0`, a soft and a hard
 * limit as `nofile=512:4096` (prlimit(1)'s): an Rlimits object, checked by
 * normalizeRlimits when used. TypeError for text that is not that form.
 */
export function parseRlimitsText(text: string): Rlimits {
  // No prototype: "__proto__=1" is a name like any other, and an unknown one.
  const out = Object.create(null) as Record<string, RlimitValue>;
  for (const item of text.split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new TypeError(`expected NAME=VALUE or NAME=SOFT:HARD, got ${quoteText(item)}`);
    const name = item.slice(0, eq).trim();
    const value = item.slice(eq + 1);
    const colon = value.indexOf(':');
    if (Object.hasOwn(out, name)) throw new TypeError(`limit ${quoteText(name)} given twice`);
    out[name] = colon < 0 ? value : { soft: value.slice(0, colon), hard: value.slice(colon + 1) };
  }
  normalizeRlimits(out, '--rlimit');
  return out;
}
