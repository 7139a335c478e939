// The shape of a checks file, as a valibot schema: every field known, every
// unknown field an error, and each error worded as "<where>: <field>:
// expected <what>, got <value>" so an operator can fix the file from the
// message alone. Values come out normalized (durations in ms, names of
// states as numbers); macros and user names are resolved later (checks-file.ts).
import os from 'node:os';
import * as v from 'valibot';
import { quoteName } from '../util/quote-text';
import { parseDuration } from '../util/duration';
import { isUserMacroName, MAX_ARGS } from './macros';
import { normalizeCgroup, normalizeNice, normalizeRlimits } from '../process/limits';
import { MAX_TICK_MS } from '../check/model/definition';

/** Whether `check` accepts value (its own messages are for the API; the file's say what to write). */
function accepted(check: (value: unknown) => unknown): (value: unknown) => boolean {
  return (value) => {
    try {
      check(value);
      return true;
    } catch {
      return false;
    }
  };
}

const RLIMITS = 'an object of limits like { "nofile": 1024, "as": "512M", "core": 0 } (names as, core, cpu, data, fsize, ' +
  'locks, memlock, msgqueue, nice, nofile, nproc, rss, rtprio, rttime, sigpending, stack; a value is a whole number, ' +
  '"unlimited", a size like "64M" for byte limits, or { "soft": …, "hard": … } with soft ≤ hard)';

function isDuration(value: unknown): boolean {
  try {
    parseDuration(value, '');
    return true;
  } catch {
    return false;
  }
}

const DURATION = 'a duration like 500, "250ms", "10s" or "5m"';

function duration(min: number) {
  const expected = min > 0 ? `${DURATION}, at least 1 ms` : DURATION;
  return v.pipe(
    v.unknown(),
    v.check(isDuration, expected),
    v.transform((x) => parseDuration(x, '')),
    v.check((ms) => ms >= min, expected),
  );
}

const TICK = `0 or a duration from 1 ms to ${MAX_TICK_MS / 1000} s, like "50ms"`;

function isTick(value: unknown): boolean {
  if (!isDuration(value)) return false;
  const ms = parseDuration(value, '');
  return ms === 0 || (ms >= 1 && ms <= MAX_TICK_MS);
}

/** The runner's tick (CheckRunner's `tick`): 0, or 1 ms to a minute; checked before it is made ms, so a refusal shows what the file says. */
const tick = v.pipe(v.unknown(), v.check(isTick, TICK), v.transform((x) => parseDuration(x, '')));

const STATES = ['OK', 'WARNING', 'CRITICAL', 'UNKNOWN'] as const;
const state = v.pipe(
  v.union([v.picklist([0, 1, 2, 3]), v.picklist(STATES)], 'a state: 0-3 or OK, WARNING, CRITICAL, UNKNOWN'),
  v.transform((s) => (typeof s === 'number' ? s : STATES.indexOf(s)) as 0 | 1 | 2 | 3),
);

const SIGNAL_NAMES = Object.keys(os.constants.signals);
const SIGNAL = 'a signal name like "SIGTERM" or a number 1-64';
const signal = v.union(
  [v.picklist(SIGNAL_NAMES), v.pipe(v.number(), v.integer(SIGNAL), v.minValue(1, SIGNAL), v.maxValue(64, SIGNAL))],
  SIGNAL,
);

// What getpwnam() could find: the usual portable name characters (no `:`,
// no blank, no leading `-`), or a numeric id.
const NAME_OR_ID = 'a user or group name (letters, digits, _ . -, not starting with -) or a numeric id';
const nameOrId = v.pipe(
  v.union([
    v.pipe(v.string(), v.maxLength(64, NAME_OR_ID), v.regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*\$?$/, NAME_OR_ID)),
    v.pipe(v.number(), v.integer(NAME_OR_ID), v.minValue(0, NAME_OR_ID), v.maxValue(0xfffffffe, NAME_OR_ID), v.transform(String)),
  ], NAME_OR_ID),
);

const text = (what: string) => v.string(what);
const nonEmpty = (what: string) => v.pipe(v.string(what), v.minLength(1, what));

const METRICS = 'true, false or { "perfdata": false }';

/** Fields a check and `defaults` share. */
const optionFields = {
  interval: v.optional(duration(1)),
  retryInterval: v.optional(duration(1)),
  maxAttempts: v.optional(v.pipe(v.number('a whole number >= 1'), v.integer('a whole number >= 1'), v.minValue(1, 'a whole number >= 1'))),
  timeout: v.optional(duration(0)),
  timeoutState: v.optional(state),
  forceKillAfter: v.optional(duration(0)),
  maxOutput: v.optional(v.pipe(v.number('a number of bytes >= 0'), v.integer('a number of bytes >= 0'), v.minValue(0, 'a number of bytes >= 0'))),
  shell: v.optional(v.union([v.literal(false), v.literal('auto'), v.literal(true)], 'false, "auto" or true')),
  cwd: v.optional(nonEmpty('a directory path')),
  env: v.optional(v.record(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name')), text('a string value'), 'an object of NAME: "value" strings')),
  killSignal: v.optional(signal),
  user: v.optional(nameOrId),
  group: v.optional(nameOrId),
  outputGrace: v.optional(v.pipe(duration(0), v.check((ms: number) => ms <= 2 ** 31 - 1, `${DURATION}, at most 2147483647 ms`))),
  cleanup: v.optional(v.boolean('true or false')),
  rlimits: v.optional(v.pipe(v.unknown(), v.check(accepted((x) => normalizeRlimits(x)), RLIMITS))),
  nice: v.optional(v.pipe(v.unknown(), v.check(accepted(normalizeNice), 'a whole number from -20 to 19'))),
  cgroup: v.optional(v.pipe(v.unknown(), v.check(accepted(normalizeCgroup), 'the absolute path of a cgroup v2 directory'))),
  // false: none of the check's noshell_check_* series; { perfdata: false }: all but its perfdata ones.
  metrics: v.optional(v.union([
    v.boolean(),
    v.strictObject({ perfdata: v.optional(v.boolean(METRICS)) }, METRICS),
  ], METRICS)),
};

const COMMAND = 'a command string or a non-empty argv array of strings';
const commandUnion = v.union(
  [nonEmpty(COMMAND), v.pipe(v.array(v.string(COMMAND)), v.minLength(1, COMMAND))],
  COMMAND,
);

/** What commandUnion accepts (its output for these is the input itself). */
function isCommand(x: unknown): x is string | string[] {
  if (typeof x === 'string') return x.length > 0;
  if (!Array.isArray(x) || x.length === 0) return false;
  for (let i = 0; i < x.length; i++) if (typeof x[i] !== 'string') return false;
  return true;
}

// Given only what isCommand() has just accepted (below): not checked again.
const validCommand = v.custom<string | string[]>(() => true, COMMAND);
// A valid command passes as it is; any other gets the union, whose issues (and
// so messages) are unchanged. The union alone made the issue of its failed
// string branch for every argv command: ~1.7 µs a check, 170 ms of loading
// 100,000 checks.
const command = v.lazy((x) => (isCommand(x) ? validCommand : commandUnion));

export const checkSchema = v.strictObject({
  id: nonEmpty('a non-empty string'),
  command,
  args: v.optional(v.pipe(v.array(text('a string'), `an array of at most ${MAX_ARGS} strings ($ARG1$…)`), v.maxLength(MAX_ARGS, `at most ${MAX_ARGS} strings ($ARG1$…)`))),
  ...optionFields,
});

const NAMES = 'an array of check ids or labels, exact or a prefix ending in *';
const names = v.array(nonEmpty(NAMES), NAMES);
const PERFDATA = 'true, false or { "checks": [...], "labels": [...] }';

/** The runner-wide metrics options of `noshell run` (RunnerMetricsOptions). */
const runnerMetrics = v.strictObject({
  perfdata: v.optional(v.union([v.boolean(), v.strictObject({ checks: v.optional(names), labels: v.optional(names) }, PERFDATA)], PERFDATA)),
  perfdataLimit: v.optional(v.pipe(v.number('a whole number >= 0'), v.integer('a whole number >= 0'), v.minValue(0, 'a whole number >= 0'))),
  perfdataLabelMaxBytes: v.optional(v.pipe(v.number('a whole number >= 1'), v.integer('a whole number >= 1'), v.minValue(1, 'a whole number >= 1'))),
}, 'an object of metrics options (perfdata, perfdataLimit, perfdataLabelMaxBytes)');

export const checksFileSchema = v.strictObject({
  concurrency: v.optional(v.pipe(v.number('a whole number >= 1'), v.integer('a whole number >= 1'), v.minValue(1, 'a whole number >= 1'))),
  tick: v.optional(tick),
  macros: v.optional(v.record(
    v.pipe(v.string(), v.check(isUserMacroName, 'a user macro name USER1 … USER256')),
    text('a string'),
    'an object of USERn: "value" strings',
  )),
  defaults: v.optional(v.strictObject(optionFields, 'an object of check options')),
  metrics: v.optional(runnerMetrics),
  checks: v.array(checkSchema, 'an array of checks'),
}, 'an object with a "checks" array');

/**
 * The file with its checks not looked into: what a load that validates the
 * checks one at a time (checks-file-load.ts) checks first. Anything it
 * refuses, the whole schema refuses too.
 */
export const checksFileShell = v.strictObject({
  ...checksFileSchema.entries,
  checks: v.array(v.unknown(), 'an array of checks'),
}, 'an object with a "checks" array');

export type ChecksFileData = v.InferOutput<typeof checksFileSchema>;
export type CheckData = v.InferOutput<typeof checkSchema>;

function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  let s: string;
  try {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- only for what JSON cannot show (a function, a symbol); parsed files hold none
    s = JSON.stringify(value) ?? String(value);
  } catch {
    // A BigInt, a cycle from a library caller, or nesting too deep to stringify (String() of
    // such an array recurses too and throws again): what kind of value it is says enough.
    s = typeof value === 'bigint' ? `${value}n` : kind(value);
  }
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
}

/** "checks[2] (id \"disk\")", "defaults", "macros" or "the file" for an issue's path. */
function where(data: unknown, path: readonly v.IssuePathItem[]): { where: string; rest: readonly v.IssuePathItem[] } {
  const [first, second] = path;
  if (first === undefined) return { where: 'the file', rest: [] };
  if (first.key === 'checks' && second !== undefined) {
    const check = (data as { checks: unknown[] }).checks[second.key as number] as { id?: unknown } | null;
    const id = typeof check === 'object' && check !== null && typeof check.id === 'string' ? ` (id ${quoteName(check.id)})` : '';
    return { where: `checks[${String(second.key)}]${id}`, rest: path.slice(2) };
  }
  if (first.key === 'defaults' || first.key === 'macros') return { where: String(first.key), rest: path.slice(1) };
  return { where: 'the file', rest: path };
}

/** What the whole file turned out to be: not its text, which may be anything (a symlink to /etc/shadow read as YAML is one string). */
function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function describeIssue(data: unknown, issue: v.BaseIssue<unknown>): string {
  const path = issue.path ?? [];
  const { where: at, rest } = where(data, path);
  // Field names come from the file (an unknown field, an env or macro key):
  // quoted, escaped and cut like an id.
  const joined = rest.map((p) => (typeof p.key === 'number' ? `[${p.key}]` : `.${String(p.key)}`)).join('');
  const field = quoteName(joined.startsWith('.') ? joined.slice(1) : joined);
  const obj = issue.type === 'strict_object' || issue.type === 'object';
  if (obj && issue.expected === 'never') return `${at}: unknown field ${field}`;
  if (obj && issue.input === undefined && joined !== '') return `${at}: field ${field} is missing`;
  // A bad key of a record (env, macros) is the name itself: cut as one.
  const badKey = path.length > 0 && (path[path.length - 1] as { origin?: string }).origin === 'key';
  const got = path.length === 0 ? kind(issue.input) : badKey ? quoteName(String(issue.input)) : shown(issue.input);
  // The deepest issue of a union is the one to report, but its message is ours.
  return `${at}: ${joined === '' ? '' : `field ${field}: `}expected ${issue.message}, got ${got}`;
}

/** What the schema refuses in parsed file data, a line each (none when it is valid). */
export function checksFileProblems(data: unknown): string[] {
  const r = v.safeParse(checksFileSchema, data);
  return r.success ? [] : [...new Set(r.issues.map((i) => describeIssue(data, i)))];
}

/** Validates parsed file data; throws a TypeError listing every problem. */
export function validateChecksFile(data: unknown, file: string): ChecksFileData {
  const r = v.safeParse(checksFileSchema, data);
  if (r.success) return r.output;
  const lines = [...new Set(r.issues.map((i) => describeIssue(data, i)))];
  throw new TypeError(`${file}: invalid checks file:\n  ${lines.join('\n  ')}`);
}
