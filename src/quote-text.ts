// Untrusted text quoted in an error message: JSON-escaped and cut to a
// prefix, so a 1 MiB bad value neither makes a 1 MiB message (and log line)
// nor costs a large allocation per error (issue 8).
const MAX_QUOTED = 100;

export function quoteText(text: string, max = MAX_QUOTED): string {
  return text.length > max ? `${JSON.stringify(text.slice(0, max))}… (${text.length} characters)` : JSON.stringify(text);
}
