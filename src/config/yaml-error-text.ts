// A YAML parse error of a checks file in our own words, by the library's
// error code: its messages quote the input (a tag, a directive, an escape,
// a code frame of the line), and the file may not be a checks file at all
// but a secret one a symlink points to, read as root. A position and a
// reason, nothing of the file.
import type { ErrorCode, LineCounter } from 'yaml';

const REASONS: Record<ErrorCode, string> = {
  ALIAS_PROPS: 'an alias cannot have an anchor or a tag',
  BAD_ALIAS: 'a bad alias',
  BAD_COLLECTION_TYPE: 'a tag for another kind of collection',
  BAD_DIRECTIVE: 'a bad or unknown % directive',
  BAD_DQ_ESCAPE: 'a bad escape in a double-quoted string',
  BAD_INDENT: 'bad indentation',
  BAD_PROP_ORDER: 'an anchor or tag in the wrong place',
  BAD_SCALAR_START: 'a plain value cannot start with this character (quote it)',
  BLOCK_AS_IMPLICIT_KEY: 'a block collection as an implicit key',
  BLOCK_IN_FLOW: 'a block collection inside a flow one ([…] or {…})',
  DUPLICATE_KEY: 'map keys must be unique',
  IMPOSSIBLE: 'unparsable input',
  KEY_OVER_1024_CHARS: 'an implicit key longer than 1024 characters',
  MISSING_CHAR: 'a missing character (a "," or ":", a space after ":", or a closing quote or bracket)',
  MULTILINE_IMPLICIT_KEY: 'an implicit key must be on one line',
  MULTIPLE_ANCHORS: 'more than one anchor on a node',
  MULTIPLE_DOCS: 'more than one document (---): a checks file is one',
  MULTIPLE_TAGS: 'more than one tag on a node',
  NON_STRING_KEY: 'a map key that is not a string',
  RESOURCE_EXHAUSTION: 'collections nested too deeply', // the composer's stack ran out (aliases are counted in toJS)
  TAB_AS_INDENT: 'a tab as indentation',
  TAG_RESOLVE_FAILED: 'unresolved tag: only the core schema\'s (!!str, !!int, !!float, !!bool, !!null, !!seq, !!map)',
  UNEXPECTED_TOKEN: 'unexpected token',
};

/** Where a problem is: the parser's LineCounter answers in O(log n) (a scan per problem was quadratic). */
function position(lines: LineCounter, length: number, at: number): string | null {
  if (!Number.isInteger(at) || at < 0 || at > length) return null;
  const { line, col } = lines.linePos(at);
  return `line ${line}, column ${col}`;
}

/** One problem: its code (the library's or DUPLICATE_KEY) and offset, as a line of our own words. */
export function yamlErrorText(lines: LineCounter, length: number, code: ErrorCode, at: number): string {
  // A code this table does not know (a newer library): its name, which is the library's, not the file's.
  const reason = Object.hasOwn(REASONS, code) ? REASONS[code] : `YAML error ${String(code).slice(0, 40)}`;
  const where = position(lines, length, at);
  return where === null ? reason : `${where}: ${reason}`;
}

/** What toJS() threw, in our words: the library's messages name the alias. */
export function yamlConvertText(err: Error, maxAliases: number): string {
  if (err.message.startsWith('Excessive alias count')) return `excessive alias count: more than ${maxAliases} expansions`;
  if (err.message.startsWith('Unresolved alias')) return 'an alias whose anchor is not set before it';
  return 'the document cannot be converted';
}
