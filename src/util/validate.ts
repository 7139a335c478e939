// Input checks shared by every API; no dependency on the addon, so pure
// modules (the command parser) can use them without loading it.

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  // Not String(fn): that is the function's whole source text.
  if (typeof value === 'function') return 'a function';
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects and functions returned above: a primitive is left
  return `${typeof value} ${String(value)}`;
}

export function checkString(value: unknown, what: string): string {
  if (typeof value !== 'string') {
    throw new TypeError(`${what} must be a string, got ${describe(value)}`);
  }
  if (value.includes('\0')) {
    throw new TypeError(`${what} must not contain NUL bytes: ${JSON.stringify(value)}`);
  }
  return value;
}
