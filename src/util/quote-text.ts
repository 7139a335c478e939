// Untrusted text quoted in an error message: JSON-escaped and cut to a
// prefix, so a 1 MiB bad value neither makes a 1 MiB message (and log line)
// nor costs a large allocation per error (issue 8).
const MAX_QUOTED = 100;

export function quoteText(text: string, max = MAX_QUOTED): string {
  return text.length > max ? `${JSON.stringify(text.slice(0, max))}… (${text.length} characters)` : JSON.stringify(text);
}

/**
 * A name read from a file — a check id, a field or key, a macro — in a
 * message. Shorter than a quoted value: a name is read to be recognized, and
 * a file that is not a checks file at all (a secret one a symlink pointed
 * to) shows no more of itself than this.
 */
export const MAX_NAME = 40;

/**
 * Of a name that is no identifier (anything but letters, digits, `_ . - [ ]`),
 * fewer still: a line of /etc/shadow read as YAML is one "field" whose first
 * 40 characters held the salt and part of the hash (issue 17).
 */
export const MAX_ODD_NAME = 8;

function isIdentifier(name: string, upTo: number): boolean {
  for (let i = 0; i < upTo; i++) {
    const c = name.charCodeAt(i);
    // Letters, digits, _ . - and the brackets of a field path's index (checks[0], metrics.perfdata.checks[2]).
    const ok = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x2e || c === 0x2d
      || c === 0x5b || c === 0x5d;
    if (!ok) return false;
  }
  return true;
}

export function quoteName(name: string): string {
  return quoteText(name, isIdentifier(name, Math.min(name.length, MAX_NAME)) ? MAX_NAME : MAX_ODD_NAME);
}
