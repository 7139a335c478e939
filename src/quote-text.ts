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

export function quoteName(name: string): string {
  return quoteText(name, MAX_NAME);
}
