// Reading a checks file: JSON, or YAML for .yaml/.yml names. YAML is parsed
// safely: the core schema only (no custom or language tags — an unknown tag
// is an error, not a string), unique keys, no `<<` merges, and aliases
// bounded (a "billion laughs" file is refused rather than expanded).
// Only a regular file is read, and never more than its size cap: /dev/zero,
// a FIFO or a terminal is refused at once instead of read without end.
// As root, only a file nobody else could have written or swapped is read
// (fs-trust.ts): its checks may run as any user. And whatever file it is
// (a symlink to /etc/shadow…), a syntax error shows where, not what.
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { LineCounter, parseDocument, type ErrorCode } from 'yaml';
import { kindOf } from '../util/small-file';
import { untrustedFile, type FileIdentity } from '../util/fs-trust';
import { actingUid } from '../util/privilege';
import { jsonSyntaxError, lineColumn } from './json-syntax';
import { yamlConvertText, yamlErrorText } from './yaml-error-text';
import { duplicateKeys } from './yaml-unique-keys';

/** Larger than any sane checks file; keeps a mistaken path from eating memory. */
export const MAX_JSON_BYTES = 16 * 1024 * 1024;
/** YAML parses at ~2.4 s per MiB on the event loop (reloads too): a lower cap. */
export const MAX_YAML_BYTES = 4 * 1024 * 1024;
const MAX_ALIASES = 100;

export function isYamlFile(file: string): boolean {
  const lower = file.toLowerCase();
  return lower.endsWith('.yaml') || lower.endsWith('.yml');
}

/** Problems listed in an error at most; the rest are counted. */
const MAX_YAML_PROBLEMS = 10;

function parseYaml(text: string, file: string): unknown {
  const lineCounter = new LineCounter();
  // prettyErrors off: it appends the line of the file to each message. uniqueKeys
  // off: the library's check is quadratic in a map's keys (yaml-unique-keys.ts).
  const doc = parseDocument(text, { schema: 'core', merge: false, uniqueKeys: false, strict: true, prettyErrors: false, lineCounter });
  const problems: { code: ErrorCode; at: number }[] = [...doc.errors, ...doc.warnings].map((e) => ({ code: e.code, at: e.pos[0] }));
  const dups = duplicateKeys(doc, MAX_YAML_PROBLEMS);
  for (const at of dups.offsets) problems.push({ code: 'DUPLICATE_KEY', at });
  const total = doc.errors.length + doc.warnings.length + dups.count;
  if (total > 0) {
    const shown = problems.sort((a, b) => a.at - b.at).slice(0, MAX_YAML_PROBLEMS);
    const lines = shown.map((p) => yamlErrorText(lineCounter, text.length, p.code, p.at));
    if (total > shown.length) lines.push(`… and ${total - shown.length} more`);
    throw new TypeError(`${file}: invalid YAML:\n  ${lines.join('\n  ')}`);
  }
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    // eslint-disable-next-line preserve-caught-error -- the parser's own error quotes the file's text (issue 17): not passed on
    throw new TypeError(`${file}: invalid YAML: ${yamlConvertText(err as Error, MAX_ALIASES)}`);
  }
}

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const e = jsonSyntaxError(text);
    throw new TypeError(`${file}: invalid JSON${e === null ? '' : `: ${lineColumn(text, e.offset)}: ${e.reason}`}`);
  }
}

/** A checks file refused for who could have written it (not a read error). */
class TrustRefusal extends TypeError {}

/**
 * As root, a TypeError unless nobody but root could have written `file` or
 * swapped it for another; returns what opening it must give (null: not root).
 */
function refuseUntrusted(file: string): FileIdentity | null {
  if (actingUid() !== 0) return null;
  let why: string | null;
  const found: FileIdentity = { dev: -1, ino: -1 };
  try {
    why = untrustedFile(file, found);
  } catch (err) {
    throw new TypeError(`${file}: cannot read: ${(err as Error).message}`, { cause: err });
  }
  if (why !== null) throw new TypeError(`refusing to read ${file} as root: ${why}`);
  return found;
}

/** At most `max` bytes of the regular file `file`; an Error saying why not. */
function readCapped(file: string, max: number, expect: FileIdentity | null): Buffer {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (no effect on files).
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error(`is ${kindOf(st)}, not a regular file`);
    if (expect !== null && (st.dev !== expect.dev || st.ino !== expect.ino)) {
      throw new TrustRefusal(`refusing to read ${file} as root: it opens another file than its path names (a /proc link into another mount?)`);
    }
    if (st.size > max) throw new Error(`larger than ${max} bytes (${st.size})`);
    // The size may change under us: read one byte past the cap at most.
    const buf = Buffer.allocUnsafe(Math.min(st.size, max) + 1);
    let n = 0;
    for (let got; n < buf.length && (got = readSync(fd, buf, n, buf.length - n, null)) > 0;) n += got;
    if (n > max) throw new Error(`larger than ${max} bytes`);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** A checks file's bytes as read, and their SHA-256 (what a reload compares to find the file as it was). */
export interface ChecksBytes {
  text: string;
  yaml: boolean;
  /** Hex SHA-256 of the bytes read (~12 ms for 15 MiB here). */
  sha256: string;
}

/** Reads `file` (trusted as root, capped); a TypeError naming the file if it cannot be read. */
export function readChecksBytes(file: string): ChecksBytes {
  const identity = refuseUntrusted(file);
  const yaml = isYamlFile(file);
  let bytes: Buffer;
  try {
    bytes = readCapped(file, yaml ? MAX_YAML_BYTES : MAX_JSON_BYTES, identity);
  } catch (err) {
    if (err instanceof TrustRefusal) throw err;
    throw new TypeError(`${file}: cannot read: ${(err as Error).message}`, { cause: err });
  }
  return { text: bytes.toString('utf8'), yaml, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** The data of bytes read from `file`, not yet validated; a TypeError naming the file if they cannot be parsed. */
export function parseChecksBytes(file: string, read: ChecksBytes): unknown {
  return read.yaml ? parseYaml(read.text, file) : parseJson(read.text, file);
}
