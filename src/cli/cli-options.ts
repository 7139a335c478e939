// The options of `noshell check` and `noshell run`, read one way and refused in
// noshell's words: `--opt value` and `--opt=value`; a value-taking option takes
// the next word whatever it starts with (`--timeout -1` is a bad timeout, not
// an "ambiguous" option); an unknown option, a missing value and a bad value
// each name the option, what it takes and what was given (quoted and cut: a
// 1 MiB argument makes no 1 MiB message).
import { quoteText } from '../util/quote-text';

/** Each option by its name without the dashes: whether it takes a value; 'list': a value, and
 * repeats join with commas (`--rlimit a=1 --rlimit b=2` is `--rlimit a=1,b=2`). */
export type OptionSpec = Readonly<Record<string, 'value' | 'list' | 'flag'>>;

export interface ScannedOptions {
  /** The value of each option given (a flag: true); the last one wins when one is repeated, but for a 'list'. */
  values: Map<string, string | true>;
  /** Words that are not options, before any `--`. */
  positionals: string[];
  /** What follows `--`, or null without one. */
  rest: string[] | null;
}

/** A usage error: the message, then the usage on lines of its own. */
export class UsageError extends TypeError {
  override name = 'UsageError';
  constructor(readonly command: string, readonly reason: string, readonly usage: string) {
    super(`${command}: ${reason}\nusage: ${usage}`);
  }
}

export function scanOptions(command: string, usage: string, args: readonly string[], spec: OptionSpec): ScannedOptions {
  const values = new Map<string, string | true>();
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') return { values, positionals, rest: args.slice(i + 1) };
    if (!a.startsWith('-') || a === '-') {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.startsWith('--') ? a.slice(2, eq < 0 ? undefined : eq) : '';
    const kind = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (kind === undefined) throw new UsageError(command, `unknown option ${quoteText(eq < 0 ? a : a.slice(0, eq), 40)}`, usage);
    if (kind === 'flag') {
      if (eq >= 0) throw new UsageError(command, `--${name} takes no value`, usage);
      values.set(name, true);
    } else if (eq >= 0 || i + 1 < args.length) {
      const value = eq >= 0 ? a.slice(eq + 1) : args[++i];
      const before = values.get(name);
      values.set(name, kind === 'list' && typeof before === 'string' ? `${before},${value}` : value);
    } else {
      throw new UsageError(command, `--${name} needs a value`, usage);
    }
  }
  return { values, positionals, rest: null };
}

/** `--name must be WHAT, got "value"`: for a value the option does not take. */
export function badValue(command: string, usage: string, name: string, what: string, got: string): UsageError {
  return new UsageError(command, `--${name} must be ${what}, got ${quoteText(got)}`, usage);
}

/** A value of an option that takes a string: the map holds one for it (scanOptions). */
export function valueOf(o: ScannedOptions, name: string): string | undefined {
  const v = o.values.get(name);
  return v === true ? undefined : v;
}
