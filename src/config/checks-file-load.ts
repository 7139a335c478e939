// Loading a checks file with what the last load learned (checks-known.ts):
// the file is parsed and its top level validated as always, then each check
// on its own. A check whose text the last load had, under the same
// `defaults` and `macros`, is taken as it was: its id and user/group read
// from its text, its definition's hash from the last load; it is validated
// and expanded only if asked for (check(i)). Every other check is validated
// and expanded now. Errors are worded as the whole-file schema words them:
// on any invalid check the whole file is validated again for the message.
// A reload of 100,000 checks with 1 % changed validates and expands 1,000.
import * as v from 'valibot';
import type { RunnerMetricsOptions } from '../metrics/scrape/metrics-state';
import type { RunnerOptions } from '../check/runner/runner';
import { definitionHash, pairsOf, textHash, type ChecksDigest } from './checks-digest';
import type { FileCheck } from './checks-file-shape';
import { checkName, expandCheck } from './checks-file-check';
import { parseChecksBytes, readChecksBytes, type ChecksBytes } from './checks-file-text';
import { contextHash, jsonText, knownDefinitions, StaleKnown, type KnownChecks } from './checks-known';
import { checkSchema, checksFileProblems, checksFileShell, validateChecksFile, type CheckData } from './checks-schema';

export interface LoadedChecks {
  runner: RunnerOptions;
  metrics: RunnerMetricsOptions;
  digest: ChecksDigest;
  /** Check `i`: expanded now if it was known (what the digest says of it holds). */
  check(i: number): FileCheck;
  /** The length of check `i`'s definition as JSON text (what the loading thread sizes its messages by). */
  size(i: number): number;
  /** What the next load can go by. */
  known: KnownChecks;
  /** How many checks were known, and not validated or expanded. */
  skipped: number;
}

/** A valid name or id as the schema gives it: ids as strings. */
function nameOf(x: unknown): string | undefined {
  return typeof x === 'number' ? String(x) : (x as string | undefined);
}

/**
 * Lines about the whole file first, then each check's in the order of the
 * file (`checks[N] …`), each line once; lines of one check keep their order.
 */
function inFileOrder(lines: string[]): string[] {
  const indexOf = (line: string): number => {
    if (!line.startsWith('checks[')) return -1;
    let n = 0;
    for (let i = 7; i < line.length; i++) {
      const c = line.charCodeAt(i);
      if (c < 48 || c > 57) return c === 93 /* ] */ && i > 7 ? n : -1;
      n = n * 10 + (c - 48);
    }
    return -1;
  };
  return [...new Set(lines)].map((line, i) => ({ line, i, at: indexOf(line) }))
    .sort((a, b) => a.at - b.at || a.i - b.i).map(({ line }) => line);
}

/**
 * Reads (unless given what was read) and validates `file`; a TypeError
 * naming the file, check and field on any problem, as loadChecksFile().
 * `keyed` false: no check's text or definition is hashed (each hash NaN:
 * known as nothing, compared by its definition), for a load that is not
 * applied and learns nothing for the next (`noshell run --check`).
 */
export function loadChecks(
  file: string, known: KnownChecks | null | undefined, read: ChecksBytes = readChecksBytes(file), keyed = true,
): LoadedChecks {
  const data = parseChecksBytes(file, read);
  const top = v.safeParse(checksFileShell, data);
  // Anything the shell refuses the whole schema refuses: its message lists every problem.
  if (!top.success) validateChecksFile(data, file);
  if (!top.success) throw new TypeError(`${file}: invalid checks file`);
  const { checks: raws, defaults = {}, macros: macroData = {} } = top.output;
  const context = contextHash(data as { defaults?: unknown; macros?: unknown });
  const previous = knownDefinitions(known, context);
  const macros = new Map(Object.entries(macroData));
  const n = raws.length;
  const ids = new Array<string>(n);
  const users = new Array<string | undefined>(n);
  const groups = new Array<string | undefined>(n);
  const raw = new Float64Array(n);
  const defs = new Float64Array(n);
  const sizes = new Uint32Array(n);
  // Expanded checks; undefined where known (expanded when asked for).
  const checks = new Array<FileCheck | undefined>(n);
  const problems: string[] = [];
  const seen = new Map<string, number>();
  let invalid = false;
  let skipped = 0;
  for (let i = 0; i < n; i++) {
    const r = raws[i];
    const text = keyed ? jsonText(r) : null;
    raw[i] = text === null ? NaN : textHash(text);
    const def = previous?.get(raw[i]);
    let parsed: CheckData | undefined;
    if (def === undefined) {
      const p = v.safeParse(checkSchema, r);
      if (!p.success) {
        invalid = true;
        continue;
      }
      parsed = p.output;
    }
    const id = parsed !== undefined ? parsed.id : (r as { id: string }).id;
    ids[i] = id;
    // In file order, and before the check's own problem, as loadChecksFile() always worded them.
    const first = seen.get(id);
    if (first !== undefined) problems.push(`${checkName(id, i)}: field "id": the same id as checks[${first}]`);
    else seen.set(id, i);
    if (parsed === undefined) {
      const c = r as { user?: unknown; group?: unknown };
      users[i] = Object.hasOwn(c, 'user') ? nameOf(c.user) : defaults.user;
      groups[i] = Object.hasOwn(c, 'group') ? nameOf(c.group) : defaults.group;
      defs[i] = def!;
      skipped++;
      continue;
    }
    const made = expandCheck(parsed, i, defaults, macros);
    if (typeof made === 'string') {
      problems.push(made);
      continue;
    }
    checks[i] = made;
    users[i] = made.user;
    groups[i] = made.group;
    if (!keyed) {
      defs[i] = NaN;
      continue;
    }
    const defText = JSON.stringify(made.definition);
    defs[i] = textHash(defText);
    sizes[i] = defText.length;
  }
  // Every problem at once: what the schema refuses, and the ids, macros and intervals of the
  // checks it takes (a file fixed for the first would otherwise fail again on the second).
  if (invalid || problems.length > 0) {
    const lines = invalid ? inFileOrder([...checksFileProblems(data), ...problems]) : problems;
    throw new TypeError(`${file}: invalid checks file:\n  ${lines.join('\n  ')}`);
  }
  const { pairs, pairOf } = pairsOf(users, groups);
  const check = (i: number): FileCheck => {
    let c = checks[i];
    if (c === undefined) {
      // Taken as known by its text's hash: it must be valid, and expand to the definition whose hash the digest gave.
      const parsed = v.safeParse(checkSchema, raws[i]);
      const made = parsed.success ? expandCheck(parsed.output, i, defaults, macros) : null;
      const hash = made === null || typeof made === 'string' ? null : definitionHash(made.definition);
      if (hash === null || !(hash === defs[i] || (Number.isNaN(hash) && Number.isNaN(defs[i])))) {
        throw new StaleKnown(`${file}: ${checkName(ids[i], i)}: its text has the hash of a check of the last load but is not that check`);
      }
      c = made as FileCheck;
      checks[i] = c;
    }
    return c;
  };
  return {
    runner: {
      ...(top.output.concurrency !== undefined ? { concurrency: top.output.concurrency } : {}),
      ...(top.output.tick !== undefined ? { tick: top.output.tick } : {}),
    },
    metrics: top.output.metrics ?? {},
    // Copies: the loading thread hands these over (transfers them); `defs` stays to check known ones against.
    digest: { ids, hashes: defs.slice(), pairs, pairOf },
    check,
    size: (i) => (sizes[i] > 0 ? sizes[i] : (sizes[i] = JSON.stringify(check(i).definition).length)),
    known: { context, raw, defs: defs.slice(), file: read.sha256 },
    skipped,
  };
}
