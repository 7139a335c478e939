// Option syntax of the Mod-Gearman C tools: `--key=value`, `--key value`,
// bare boolean flags, and config files of `key=value` lines (`#` comments,
// `config=`/`include=` nesting, directories of *.cfg/*.conf) — one flat list.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { readSmallFile } from '../util/small-file';

/** The C tools' config files are a few KiB: more than this is not one. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

export interface OptionSpec {
  /** Canonical name → kind. Aliases map to canonical names. */
  kinds: Record<string, 'value' | 'bool' | 'list'>;
  aliases?: Record<string, string>;
  /** C options accepted and ignored (they tune the C process model), with a warning. */
  ignored?: ReadonlySet<string>;
  /** C options whose behaviour noshell does not implement: refused rather than silently ignored. */
  unsupported?: ReadonlySet<string>;
}

export interface ParsedOptions {
  values: Map<string, string[]>;
  warnings: string[];
}

const YES = new Set(['yes', 'on', 'true', '1']);
const NO = new Set(['no', 'off', 'false', '0']);

/** The C tools' yes/no words; anything else keeps the default. */
export function yesNo(value: string | undefined, dflt: boolean): boolean {
  if (value === undefined) return dflt;
  const v = value.toLowerCase();
  if (YES.has(v)) return true;
  if (NO.has(v)) return false;
  return dflt;
}

function canonical(spec: OptionSpec, raw: string): string {
  const key = raw.toLowerCase().trim().replace(/^-+/, '');
  return spec.aliases?.[key] ?? key;
}

class Collector {
  readonly values = new Map<string, string[]>();
  readonly warnings: string[] = [];
  /** `reload`: files are read again for a SIGHUP (a pipe is refused: the loop must not wait for a writer). */
  constructor(private readonly spec: OptionSpec, readonly reload = false) {}

  add(rawKey: string, value: string | undefined, where: string, depth: number): void {
    const key = canonical(this.spec, rawKey);
    if (key === 'config' || key === 'configfile' || key === 'include') {
      if (value === undefined || value === '') throw new TypeError(`${where}: ${rawKey} needs a file name`);
      readConfig(value, this, depth + 1);
      return;
    }
    if (this.spec.ignored?.has(key)) {
      this.warnings.push(`${where}: option ${rawKey} is ignored by noshell (no effect on its process model)`);
      return;
    }
    if (this.spec.unsupported?.has(key)) throw new TypeError(`${where}: option ${rawKey} is not supported by noshell`);
    const kind = this.spec.kinds[key];
    if (kind === undefined) throw new TypeError(`${where}: unknown option ${rawKey}`);
    if (kind !== 'bool' && (value === undefined || value.trim() === '')) throw new TypeError(`${where}: option ${rawKey} needs a value`);
    const list = this.values.get(key) ?? [];
    list.push(kind === 'bool' && value === undefined ? 'yes' : value!.trim());
    this.values.set(key, list);
  }
}

function readConfig(file: string, c: Collector, depth: number): void {
  if (depth > 10) throw new TypeError(`config ${file}: too deeply nested config files`);
  let st;
  try {
    st = statSync(file);
  } catch (err) {
    throw new TypeError(`cannot read config file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  if (st.isDirectory()) {
    for (const name of readdirSync(file).sort()) {
      const full = path.join(file, name);
      if (statSync(full).isDirectory() || /\.(?:cfg|conf)$/.test(name)) readConfig(full, c, depth + 1);
    }
    return;
  }
  let text: string;
  try {
    text = readSmallFile(file, { max: MAX_CONFIG_BYTES, pipes: !c.reload }).toString('utf8');
  } catch (err) {
    if (err instanceof TypeError) throw new TypeError(`config file ${err.message}`, { cause: err });
    throw new TypeError(`cannot read config file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  text.split('\n').forEach((rawLine, i) => {
    const hash = rawLine.indexOf('#');
    const line = (hash >= 0 ? rawLine.slice(0, hash) : rawLine).trim();
    if (line === '') return;
    const eq = line.indexOf('=');
    c.add(eq < 0 ? line : line.slice(0, eq), eq < 0 ? undefined : line.slice(eq + 1), `${file}:${i + 1}`, depth);
  });
}

/** Parses command-line arguments (and the config files they name) in order; later values win for single-value options. */
export function parseToolArgs(args: readonly string[], spec: OptionSpec, tool: string, reload = false): ParsedOptions {
  const c = new Collector(spec, reload);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('-') || a === '-' || a === '--') throw new TypeError(`${tool}: unexpected argument ${JSON.stringify(a)}`);
    const eq = a.indexOf('=');
    if (eq >= 0) {
      c.add(a.slice(0, eq), a.slice(eq + 1), tool, 0);
      continue;
    }
    const key = canonical(spec, a);
    const kind = key === 'config' || key === 'configfile' || key === 'include' ? 'value' : spec.kinds[key];
    const next = args[i + 1];
    if (kind === 'bool') {
      // `--hosts` alone is yes; `--hosts no` takes the word.
      if (next !== undefined && (YES.has(next.toLowerCase()) || NO.has(next.toLowerCase()))) c.add(a, args[++i], tool, 0);
      else c.add(a, undefined, tool, 0);
    } else if (kind !== undefined && next !== undefined && !(next.startsWith('--') && next.length > 2)) {
      c.add(a, args[++i], tool, 0);
    } else {
      c.add(a, undefined, tool, 0);
    }
  }
  return { values: c.values, warnings: c.warnings };
}

export function last(p: ParsedOptions, key: string): string | undefined {
  const v = p.values.get(key);
  return v === undefined ? undefined : v[v.length - 1];
}

/** All values of a list option, comma-separated entries split and trimmed. */
export function list(p: ParsedOptions, key: string): string[] {
  return (p.values.get(key) ?? []).flatMap((v) => v.split(',')).map((s) => s.trim()).filter((s) => s !== '');
}

export function number(p: ParsedOptions, key: string, tool: string, min = 0): number | undefined {
  const v = last(p, key);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new TypeError(`${tool}: option ${key} must be a number ≥ ${min}, got ${JSON.stringify(v)}`);
  return n;
}
