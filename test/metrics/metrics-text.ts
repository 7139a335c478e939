// Test helpers for the metrics suites: a reader of the Prometheus text format
// (labels unescaped, so tests compare real ids), and promtool.
import { execFileSync, spawnSync } from 'node:child_process';

export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseValue(text: string): number {
  if (/^nan$/i.test(text)) return NaN;
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  const v = Number(text);
  if (Number.isNaN(v)) throw new Error(`bad sample value ${JSON.stringify(text)}`);
  return v;
}

/** Samples of an exposition; throws on anything the format does not allow. */
export function parseExposition(text: string): ParsedSample[] {
  const out: ParsedSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
    if (name === undefined) throw new Error(`bad line ${JSON.stringify(line)}`);
    let i = name.length;
    const labels: Record<string, string> = {};
    if (line[i] === '{') {
      i++;
      while (line[i] !== '}') {
        const key = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i))?.[0];
        if (key === undefined || line[i + key.length] !== '=' || line[i + key.length + 1] !== '"') throw new Error(`bad labels in ${line}`);
        i += key.length + 2;
        let v = '';
        for (;;) {
          const c = line[i++];
          if (c === undefined) throw new Error(`unterminated label value in ${line}`);
          if (c === '"') break;
          if (c === '\\') {
            const e = line[i++];
            if (e === 'n') v += '\n';
            else if (e === '\\' || e === '"') v += e;
            else throw new Error(`bad escape \\${e} in ${line}`);
          } else v += c;
        }
        labels[key] = v;
        if (line[i] === ',') i++;
        else if (line[i] !== '}') throw new Error(`bad label separator in ${line}`);
      }
      i++;
    }
    if (line[i] !== ' ') throw new Error(`no value in ${line}`);
    out.push({ name, labels, value: parseValue(line.slice(i + 1)) });
  }
  return out;
}

/** Samples of one metric whose labels include `match`. */
export function find(samples: ParsedSample[], name: string, match: Record<string, string> = {}): ParsedSample[] {
  return samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}

/** The one sample of `name` with these labels; throws unless exactly one. */
export function one(samples: ParsedSample[], name: string, match: Record<string, string> = {}): number {
  const found = find(samples, name, match);
  if (found.length !== 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(match)}`);
  return found[0].value;
}

/** Canonical samples for comparing two renderings of the same state. */
export function canonical(samples: ParsedSample[]): string[] {
  return samples
    .map((s) => `${s.name}${JSON.stringify(Object.entries(s.labels).sort())} ${Number.isNaN(s.value) ? 'NaN' : s.value}`)
    .sort();
}

/** Whether a program is on PATH. */
export function have(program: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${program}`]).status === 0;
}

/**
 * A peer the test needs; absent, the test is skipped loudly, except where CI
 * asks for every peer (NOSHELL_REQUIRE_PEERS=1): there it fails.
 */
export function requirePeer(program: string, pkg: string): boolean {
  if (have(program)) return true;
  const why = `${program} not found (Debian package ${pkg})`;
  if (process.env.NOSHELL_REQUIRE_PEERS === '1') throw new Error(`required peer missing: ${why}`);
  console.warn(`skipped: ${why}`);
  return false;
}

/** promtool check metrics on an exposition: its exit status and what it said. */
export function promtoolCheck(text: string): { status: number; output: string } {
  try {
    const output = execFileSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
    return { status: 0, output };
  } catch (e) {
    const err = e as { status: number; stdout: string; stderr: string };
    return { status: err.status, output: `${err.stdout}${err.stderr}` };
  }
}
