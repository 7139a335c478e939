// Reading a checks file: JSON, or YAML for .yaml/.yml names. YAML is parsed
// safely: the core schema only (no custom or language tags — an unknown tag
// is an error, not a string), unique keys, no `<<` merges, and aliases
// bounded (a "billion laughs" file is refused rather than expanded).
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';

/** Larger than any sane checks file; keeps a mistaken path from eating memory. */
const MAX_BYTES = 16 * 1024 * 1024;
const MAX_ALIASES = 100;

export function isYamlFile(file: string): boolean {
  const lower = file.toLowerCase();
  return lower.endsWith('.yaml') || lower.endsWith('.yml');
}

function firstLine(message: string): string {
  return message.split('\n', 1)[0];
}

function parseYaml(text: string, file: string): unknown {
  const doc = parseDocument(text, { schema: 'core', merge: false, uniqueKeys: true, strict: true, prettyErrors: true });
  const problems = [...doc.errors, ...doc.warnings];
  if (problems.length > 0) {
    throw new TypeError(`${file}: invalid YAML:\n  ${problems.map((e) => firstLine(e.message)).join('\n  ')}`);
  }
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (err) {
    throw new TypeError(`${file}: invalid YAML: ${firstLine((err as Error).message)}`);
  }
}

/** The file's data, not yet validated; a TypeError naming the file if it cannot be read or parsed. */
export function readChecksData(file: string): unknown {
  let text: string;
  try {
    const bytes = readFileSync(file);
    if (bytes.length > MAX_BYTES) throw new Error(`larger than ${MAX_BYTES} bytes`);
    text = bytes.toString('utf8');
  } catch (err) {
    throw new TypeError(`${file}: cannot read: ${(err as Error).message}`);
  }
  if (isYamlFile(file)) return parseYaml(text, file);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new TypeError(`${file}: invalid JSON: ${(err as Error).message}`);
  }
}
