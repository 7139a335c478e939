// A checks file's errors show where and a bounded, escaped part of a name,
// never the file's text (issue 17): `noshell run` pointed, as root, at a
// symlink to /etc/shadow printed its first line — a whole password hash — to
// stderr and the journal, through "unknown field …", V8's JSON.parse message
// ("Unexpected token 'r', "root:$6$…" is not valid JSON") and YAML's.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadChecksFile } from '../../src/config/checks-file';
import { jsonSyntaxError } from '../../src/config/json-syntax';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
// A shadow(5) line: sha512-crypt, 16 salt characters, 86 of hash.
const SALT = 'Xq7pLm2Rt9Vw4Kz1';
const HASH = 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4Y5z6A7b8C9d0E1f2G3h4I5j6K7l8M9n0O1p2Q3';
const SHADOW = `root:$6$${SALT}$${HASH}:19700:0:99999:7:::\ndaemon:*:19700:0:99999:7:::\n`;

let tmp = '';
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-messages-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let seq = 0;
function write(text: string, ext = 'json'): string {
  const file = path.join(tmp, `checks-${seq++}.${ext}`);
  writeFileSync(file, text);
  return file;
}

function refusal(file: string): string {
  try {
    loadChecksFile(file);
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return (err as Error).message;
  }
  throw new Error(`${file} was accepted`);
}

/** None of the hash past its first `shown` characters (what a 40-character prefix of the line holds); none of the salt when 0. */
function expectNoSecret(message: string, shown = 0): void {
  expect(message).not.toContain(HASH.slice(shown, shown + 8));
  expect(message).not.toContain(HASH.slice(-20));
  if (shown === 0) expect(message).not.toContain(SALT);
}

describe('a symlink to a secret file: the error shows none of it', () => {
  const secret = () => {
    const file = path.join(tmp, `shadow-${seq++}`);
    writeFileSync(file, SHADOW, { mode: 0o600 });
    return file;
  };

  it('read as JSON: a position and a reason, not V8\'s snippet of the text', () => {
    const link = path.join(tmp, `link-${seq++}.json`);
    symlinkSync(secret(), link);
    const m = refusal(link);
    expect(m).toBe(`${link}: invalid JSON: line 1, column 1: unexpected "r": expected a value`);
    expectNoSecret(m);
    // What V8 itself says: the snippet this replaces.
    expect(() => JSON.parse(SHADOW)).toThrow(SALT.slice(0, 2));
  });

  it('read as YAML (a map whose one key is the hash line): 8 characters of it at most, no salt', () => {
    const link = path.join(tmp, `link-${seq++}.yaml`);
    symlinkSync(secret(), link);
    const m = refusal(link);
    const line = SHADOW.split('\n')[0];
    expect(m).toBe(`${link}: invalid checks file:\n  the file: field "checks" is missing\n` +
      `  the file: unknown field ${JSON.stringify(line.slice(0, 8))}… (${line.length - 1} characters)`);
    expectNoSecret(m);
  });

  it('read as YAML (one string): what the file is, not what it holds', () => {
    const file = path.join(tmp, `token-${seq++}`);
    writeFileSync(file, `${SALT}${HASH}\n`, { mode: 0o600 });
    const link = path.join(tmp, `link-${seq++}.yaml`);
    symlinkSync(file, link);
    const m = refusal(link);
    expect(m).toBe(`${link}: invalid checks file:\n  the file: expected an object with a "checks" array, got a string`);
    expectNoSecret(m);
  });

  it('through `noshell run --check`: exit 2, stderr without the hash', () => {
    const link = path.join(tmp, `link-${seq++}.yml`);
    symlinkSync(secret(), link);
    const r = spawnSync(process.execPath, [CLI, 'run', '--check', link], { encoding: 'utf8', timeout: 10_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${link}: invalid checks file`);
    expectNoSecret(r.stderr, 40 - `root:$6$${SALT}$`.length);
  });
});

describe('names from the file are quoted, escaped and cut to 40 characters (8 when no identifier)', () => {
  const line = SHADOW.split('\n')[0];

  it('an unknown field, an env key, a macro key, an id: the tail of a hash line used as one is not shown', () => {
    const cases = [
      JSON.stringify({ [line]: 1, checks: [] }),
      JSON.stringify({ checks: [{ id: 'a', command: 'x', interval: 1, env: { [line]: 'v' } }] }),
      JSON.stringify({ macros: { [line]: 'v' }, checks: [] }),
      JSON.stringify({ defaults: { [line]: 1 }, checks: [] }),
      JSON.stringify({ checks: [{ id: line, command: 'x', interval: 1, colour: 1 }] }),
      JSON.stringify({ checks: [{ id: line, command: 'x', interval: 1 }, { id: line, command: 'x', interval: 1 }] }),
    ];
    for (const text of cases) {
      const m = refusal(write(text));
      // A name that is no identifier: at most its first 8 characters, prefix ("env.") included.
      expect(m).toMatch(/"(?:root:\$6\$|env\.root)"… \(1\d\d characters\)/);
      expectNoSecret(m);
    }
  });

  it('control characters in a name are escaped: none reaches the terminal', () => {
    const m = refusal(write(JSON.stringify({ 'a\u001b[2J\nb': 1, checks: [] })));
    expect(m).toBe(`${path.join(tmp, `checks-${seq - 1}.json`)}: invalid checks file:\n  the file: unknown field "a\\u001b[2J\\nb"`);
  });

  it('a 1 MiB field name, id or macro name makes a short message', () => {
    const big = 'A'.repeat(1024 * 1024);
    for (const text of [
      JSON.stringify({ [big]: 1, checks: [] }),
      JSON.stringify({ checks: [{ id: big, command: 'x', interval: 1, nope: 1 }] }),
      JSON.stringify({ checks: [{ id: 'a', command: `$${big}$`, interval: 1 }] }),
      JSON.stringify({ checks: [{ id: 'a', command: 'x', interval: 1, env: { [`1${big}`]: 'v' } }] }),
    ]) {
      const m = refusal(write(text));
      expect(m.length).toBeLessThan(400);
      expect(m).toMatch(/ \(10485\d\d characters\)/);
    }
  });
});

describe('syntax errors: where and why, not the text', () => {
  it('JSON errors give line, column and a reason of our own', () => {
    const at = (text: string) => refusal(write(text)).split(': invalid JSON: ')[1];
    expect(at('{"checks": [')).toBe('line 1, column 13: unexpected end of the file');
    expect(at('{"checks": [],}')).toBe('line 1, column 15: unexpected "}": expected a field name in double quotes');
    expect(at('{\n  "checks": [1 2]\n}')).toBe('line 2, column 16: unexpected "2": expected "," or "]"');
    expect(at('{"checks": [SECRETWORD]}')).toBe('line 1, column 13: unexpected "S": expected a value');
    expect(at('{"checks" [] }')).toBe('line 1, column 11: unexpected "[": expected ":" after a field name');
    expect(at('{"checks": "ab\ncd"}')).toBe('line 1, column 15: U+000A (a control character) in a string: write it as an escape');
    expect(at('{"checks": "never closed SECRET}')).toBe('line 1, column 12: a string that is never closed');
    expect(at('{"checks": []} trailing SECRET')).toBe('line 1, column 16: unexpected "t" after the end of the JSON value');
    expect(at('\uFEFF{"checks": []}')).toBe('line 1, column 1: unexpected U+FEFF: expected a value');
  });

  it('agrees with JSON.parse on what is valid: 3000 mutations of a checks file', () => {
    const base = JSON.stringify({ concurrency: 2, checks: [{ id: 'a', command: ['x', 'y\\n\u00e9'], interval: -1.5e3, shell: false, env: null }] });
    const alphabet = '{}[]":,.-+eE0123456789 \\ntfalsu\n\t';
    let state = 12345;
    const rand = (n: number) => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state % n;
    };
    let invalid = 0;
    for (let k = 0; k < 3000; k++) {
      let text = base;
      for (let e = 1 + rand(3); e > 0; e--) {
        const at = rand(text.length + 1);
        const c = alphabet[rand(alphabet.length)];
        text = rand(2) === 0 ? text.slice(0, at) + c + text.slice(at) : text.slice(0, at) + text.slice(at + 1);
      }
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
        invalid++;
      }
      expect(jsonSyntaxError(text) === null, text).toBe(valid);
    }
    expect(invalid).toBeGreaterThan(1000);
  });

  it('a million open brackets: found in linear time, no stack overflow', () => {
    const t0 = Date.now();
    expect(jsonSyntaxError('['.repeat(1_000_000))).toEqual({ offset: 1_000_000, reason: 'unexpected end of the file' });
    expect(jsonSyntaxError(`${'['.repeat(500_000)}${']'.repeat(500_000)}`)).toBeNull();
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it('YAML errors give line, column and a reason of our own, not the tag, directive or line quoted', () => {
    const m = refusal(write('checks: !SECRETTAG []\n', 'yaml'));
    expect(m).toMatch(/invalid YAML:\n {2}line 1, column 9: unresolved tag/);
    expect(m).not.toContain('SECRET');
    const d = refusal(write('%SECRETDIRECTIVE x\n---\nchecks: []\n', 'yaml'));
    expect(d).toMatch(/line 1, column 1: a bad or unknown % directive/);
    expect(d).not.toContain('SECRET');
    const q = refusal(write('checks: "a\\qSECRET"\n', 'yaml'));
    expect(q).toMatch(/line 1, column \d+: a bad escape in a double-quoted string/);
    expect(q).not.toContain('SECRET');
    const a = refusal(write('checks: *SECRETALIAS\n', 'yaml'));
    expect(a).not.toContain('SECRET');
  });
});
