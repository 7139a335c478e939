// Checks files: schema errors name the check, the field and what was
// expected; YAML is read safely; defaults and macros end up in each
// definition; user and group names come from the system's database.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestChecks } from '../../src/config/checks-digest';
import { loadChecksFile } from '../../src/config/checks-file';
import { LOOKUPS_AT_ONCE, resolvePairs, withIdentity } from '../../src/config/checks-identity';
import { checksRunningAsRoot } from '../../src/config/root-refusal';

let tmp = '';
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'noshell-checks-file-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let seq = 0;
function write(text: string | object, ext = 'json'): string {
  const file = path.join(tmp, `checks-${seq++}.${ext}`);
  writeFileSync(file, typeof text === 'string' ? text : JSON.stringify(text));
  return file;
}

/** The problem lines of a refused file. */
function problems(text: string | object, ext = 'json'): string[] {
  const file = write(text, ext);
  try {
    loadChecksFile(file);
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    const [head, ...lines] = (err as Error).message.split('\n');
    expect(head.startsWith(file)).toBe(true);
    return lines.map((l) => l.trim());
  }
  throw new Error(`${file} was accepted`);
}

describe('schema errors name the check, the field and what was expected', () => {
  it('unknown fields, anywhere, are errors', () => {
    expect(problems({ checks: [{ id: 'a', command: 'x', interval: 1000, intervall: 5 }] }))
      .toEqual(['checks[0] (id "a"): unknown field "intervall"']);
    expect(problems({ defaults: { timeot: 1 }, checks: [] })).toEqual(['defaults: unknown field "timeot"']);
    expect(new Set(problems({ check: [] }))).toEqual(new Set(['the file: unknown field "check"', 'the file: field "checks" is missing']));
  });

  it('wrong values say what was expected and what came', () => {
    const got = problems({
      checks: [
        { id: 'load', command: 'x', interval: 'soon' },
        { id: 'disk', command: 5, interval: '1s', timeoutState: 'BAD', maxAttempts: 0 },
        { command: 'x', interval: '1s' },
        { id: 'env', command: [], interval: 0, env: { '1X': 'a', B: 1 }, shell: 'yes', user: 'a:b', killSignal: 'SIGFOO' },
      ],
      macros: { HOST: 'x', USER1: 2 },
      concurrency: 0,
      tick: '2m',
    });
    // Every problem at once, in no promised order.
    expect(new Set(got)).toEqual(new Set([
      'checks[0] (id "load"): field "interval": expected a duration like 500, "250ms", "10s" or "5m", at least 1 ms, got "soon"',
      'checks[1] (id "disk"): field "command": expected a command string or a non-empty argv array of strings, got 5',
      'checks[1] (id "disk"): field "maxAttempts": expected a whole number >= 1, got 0',
      'checks[1] (id "disk"): field "timeoutState": expected a state: 0-3 or OK, WARNING, CRITICAL, UNKNOWN, got "BAD"',
      'checks[2]: field "id" is missing',
      'checks[3] (id "env"): field "command": expected a command string or a non-empty argv array of strings, got []',
      'checks[3] (id "env"): field "interval": expected a duration like 500, "250ms", "10s" or "5m", at least 1 ms, got 0',
      'checks[3] (id "env"): field "shell": expected false, "auto" or true, got "yes"',
      'checks[3] (id "env"): field "env.1X": expected a variable name, got "1X"',
      'checks[3] (id "env"): field "env.B": expected a string value, got 1',
      'checks[3] (id "env"): field "user": expected a user or group name (letters, digits, _ . -, not starting with -) or a numeric id, got "a:b"',
      'checks[3] (id "env"): field "killSignal": expected a signal name like "SIGTERM" or a number 1-64, got "SIGFOO"',
      'macros: field "HOST": expected a user macro name USER1 … USER256, got "HOST"',
      'macros: field "USER1": expected a string, got 2',
      'the file: field "concurrency": expected a whole number >= 1, got 0',
      'the file: field "tick": expected 0 or a duration from 1 ms to 60 s, like "50ms", got "2m"',
    ]));
  });

  it('a command that is not one says so whatever its shape; an argv of strings or a string passes as it is', () => {
    const got = problems({
      checks: [
        { id: 'a', command: ['x', 5], interval: 1 }, { id: 'b', command: '', interval: 1 },
        { id: 'c', command: [''], interval: 1 }, { id: 'd', command: { 0: 'x' }, interval: 1 }, { id: 'e', command: null, interval: 1 },
      ],
    });
    const expected = 'expected a command string or a non-empty argv array of strings, got';
    expect(got).toEqual([
      `checks[0] (id "a"): field "command": ${expected} ["x",5]`,
      `checks[1] (id "b"): field "command": ${expected} ""`,
      `checks[3] (id "d"): field "command": ${expected} {"0":"x"}`,
      `checks[4] (id "e"): field "command": ${expected} null`,
    ]);
    const file = write({ checks: [{ id: 'a', command: ['x', ''], interval: 1 }, { id: 'b', command: 'y z', interval: 1 }] });
    expect(loadChecksFile(file).checks.map((c) => c.definition.command)).toEqual([['x', ''], 'y z']);
  });

  it('after the schema: duplicate ids, a missing interval, bad macros', () => {
    expect(problems({
      macros: { USER1: '/p' },
      checks: [
        { id: 'a', command: '$USER1$/x', interval: '1s' },
        { id: 'a', command: 'x', interval: '1s' },
        { id: 'b', command: 'x' },
        { id: 'c', command: ['$USER2$/x'], interval: '1s' },
        { id: 'd', command: 'x $HOSTNAME$', interval: '1s' },
      ],
    })).toEqual([
      'checks[1] (id "a"): field "id": the same id as checks[0]',
      'checks[2] (id "b"): field "interval" is missing (give it here or in "defaults")',
      'checks[3] (id "c"): field "command": $USER2$ is not defined in "macros"',
      'checks[4] (id "d"): field "command": unknown macro $HOSTNAME$ (only $USER1$…$USER256$, $ARG1$…$ARG32$ and $$)',
    ]);
  });

  it('unreadable and unparsable files name the file', () => {
    expect(() => loadChecksFile(path.join(tmp, 'missing.json'))).toThrow(/missing\.json: cannot read/);
    expect(() => loadChecksFile(write('{"checks": ['))).toThrow(/invalid JSON/);
  });
});

describe('only a regular file of bounded size is read', () => {
  const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
  /** `noshell run --check FILE` in a child: a file read without end there cannot hang or bloat the test worker. */
  function check(file: string) {
    const t0 = Date.now();
    const r = spawnSync(process.execPath, [CLI, 'run', '--check', file], { encoding: 'utf8', timeout: 10_000, killSignal: 'SIGKILL' });
    return { status: r.status, stderr: r.stderr, ms: Date.now() - t0 };
  }

  // readFileSync('/dev/zero') read gigabytes (3 GB RSS) before the size check.
  it('/dev/zero is refused at once as a character device, not read', () => {
    const r = check('/dev/zero');
    expect(r.stderr).toMatch(/\/dev\/zero: cannot read: is a character device, not a regular file/);
    expect(r.status).toBe(2);
    expect(r.ms).toBeLessThan(5_000);
  });

  // Opening a FIFO waited for a writer forever.
  it('a FIFO is refused at once, without waiting for a writer', () => {
    const fifo = path.join(tmp, 'checks.fifo.json');
    execFileSync('mkfifo', [fifo]);
    const r = check(fifo);
    expect(r.stderr).toMatch(/checks\.fifo\.json: cannot read: is a FIFO, not a regular file/);
    expect(r.status).toBe(2);
    expect(r.ms).toBeLessThan(5_000);
    expect(() => loadChecksFile(tmp)).toThrow(/cannot read: is a directory, not a regular file/);
  });

  it('an oversize regular file is refused: JSON past 16 MiB, YAML past 4 MiB', () => {
    const json = path.join(tmp, 'big.json');
    writeFileSync(json, '');
    truncateSync(json, 16 * 1024 * 1024 + 1);
    expect(() => loadChecksFile(json)).toThrow(/big\.json: cannot read: larger than 16777216 bytes/);
    const yaml = path.join(tmp, 'big.yaml');
    writeFileSync(yaml, `checks: []\n${'#'.repeat(4 * 1024 * 1024)}\n`);
    const t0 = Date.now();
    expect(() => loadChecksFile(yaml)).toThrow(/big\.yaml: cannot read: larger than 4194304 bytes/);
    expect(Date.now() - t0).toBeLessThan(1_000);
    // Under the cap it is read as before.
    writeFileSync(yaml, `checks: []\n${'#'.repeat(1024 * 1024)}\n`);
    expect(() => loadChecksFile(yaml)).not.toThrow(/cannot read/);
  });
});

describe('definitions', () => {
  it('defaults, durations, state names and macros end up in each definition', () => {
    const file = write({
      concurrency: 8,
      macros: { USER1: '/usr/lib/nagios/plugins', USER7: 'public' },
      defaults: { interval: '1m', timeout: '10s', timeoutState: 'CRITICAL', env: { LANG: 'C' } },
      checks: [
        { id: 'snmp', command: '$USER1$/check_snmp -C $USER7$ -w $ARG1$', args: ['~:20'], retryInterval: '5s', maxAttempts: 3 },
        { id: 'argv', command: ['$USER1$/check_dummy', '$ARG1$', '$ARG2$'], args: ['0', 'a b'], interval: 500, timeout: 1000 },
      ],
    });
    const loaded = loadChecksFile(file);
    expect(loaded.runner).toEqual({ concurrency: 8 });
    // A tick in ms, from a duration or a number; 0 is none.
    for (const [tick, ms] of [['50ms', 50], [250, 250], ['1s', 1000], [0, 0], ['1m', 60_000]] as const) {
      expect(loadChecksFile(write({ tick, checks: [] })).runner, String(tick)).toEqual({ tick: ms });
    }
    for (const tick of [-1, 0.5, '61s', 'soon', null, true]) expect(() => loadChecksFile(write({ tick, checks: [] })), String(tick)).toThrow('field "tick"');
    expect(loaded.checks).toEqual([
      { definition: {
        id: 'snmp', command: '/usr/lib/nagios/plugins/check_snmp -C public -w ~:20', interval: 60_000, retryInterval: 5000,
        maxAttempts: 3, timeout: 10_000, timeoutState: 2, env: { LANG: 'C' },
      } },
      { definition: {
        id: 'argv', command: ['/usr/lib/nagios/plugins/check_dummy', '0', 'a b'], interval: 500, timeout: 1000,
        timeoutState: 2, env: { LANG: 'C' },
      } },
    ]);
  });

  it('YAML files load like JSON ones', () => {
    const yaml = write([
      '# comments are fine',
      'macros: { USER1: /bin }',
      'defaults:',
      '  interval: 30s',
      'checks:',
      '  - id: one',
      '    command: $USER1$/true',
      '  - id: two',
      '    command: [/bin/echo, "OK - two"]',
      '    timeoutState: 2',
    ].join('\n'), 'yaml');
    expect(loadChecksFile(yaml).checks.map((c) => c.definition)).toEqual([
      { id: 'one', command: '/bin/true', interval: 30_000 },
      { id: 'two', command: ['/bin/echo', 'OK - two'], interval: 30_000, timeoutState: 2 },
    ]);
    expect(loadChecksFile(write('checks: []\n', 'yml')).checks).toEqual([]);
  });

  it('YAML is parsed safely: tags, duplicate keys and alias bombs are errors', () => {
    expect(() => loadChecksFile(write('checks: !!js/function "x"\n', 'yaml'))).toThrow(/invalid YAML:\n {2}line 1, column 9: unresolved tag/);
    expect(() => loadChecksFile(write('checks: !custom []\n', 'yaml'))).toThrow(/line 1, column 9: unresolved tag: only the core schema's/);
    expect(() => loadChecksFile(write('checks: []\nchecks: []\n', 'yaml'))).toThrow(/line 2, column 1: map keys must be unique/);
    // Nested maps, in the file's order, 1 and "1" distinct (as YAML compares them); at most ten listed.
    expect(problems('checks:\n  - {id: a, 1: x, "1": y, id: b}\nx: 1\nx: 2\n', 'yaml')).toEqual([
      'line 2, column 27: map keys must be unique', 'line 4, column 1: map keys must be unique']);
    // Nesting past the composer's stack is its own reason (it was called "too many aliases").
    expect(problems(`${'['.repeat(20_000)}${']'.repeat(20_000)}`, 'yaml')[0]).toMatch(/^line 1, column \d+: collections nested too deeply$/);
    expect(problems(`checks: []\n${'x: 1\n'.repeat(25)}`, 'yaml')).toEqual([
      ...Array.from({ length: 10 }, (_, i) => `line ${i + 3}, column 1: map keys must be unique`), '… and 14 more']);
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (const [n, prev] of [['b', 'a'], ['c', 'b'], ['d', 'c'], ['e', 'd'], ['f', 'e']]) {
      bomb.push(`${n}: &${n} [${Array(10).fill(`*${prev}`).join(', ')}]`);
    }
    bomb.push('checks: []');
    expect(() => loadChecksFile(write(bomb.join('\n'), 'yaml'))).toThrow(/invalid YAML: excessive alias count: more than 100 expansions/);
  });
});

describe('user and group names from the user database', () => {
  const id = (...args: string[]) => execFileSync('id', args, { encoding: 'utf8' }).trim();

  it('a user gives uid, primary gid and the groups the database lists (initgroups)', async () => {
    const file = write({
      checks: [
        { id: 'n', command: 'x', interval: 1000, user: 'nobody' },
        { id: 'ng', command: 'x', interval: 1000, user: 'nobody', group: 'root' },
        { id: 'num', command: 'x', interval: 1000, user: 4_000_000, group: 4_000_001 },
        { id: 'g', command: 'x', interval: 1000, group: 0 },
        { id: 'plain', command: 'x', interval: 1000 },
        { id: 'r', command: 'x', interval: 1000, user: 'root' },
      ],
    });
    const loaded = loadChecksFile(file);
    const digest = digestChecks(loaded.checks);
    // Six pairs: each check asks for its own (user, group), "plain" for neither.
    expect(digest.pairs).toHaveLength(6);
    const identities = await resolvePairs(file, digest);
    const defs = loaded.checks.map((c, i) => withIdentity(c.definition, identities[digest.pairOf[i]]));
    // No identity: the definition as loaded, not a copy.
    expect(defs[4]).toBe(loaded.checks[4].definition);
    const nobodyGroups = id('-G', 'nobody').split(' ').map(Number);
    const [uid, gid] = [Number(id('-u', 'nobody')), Number(id('-g', 'nobody'))];
    expect(defs.map(({ id: name, uid: u, gid: g, groups }) => ({ name, u, g, groups }))).toEqual([
      { name: 'n', u: uid, g: gid, groups: nobodyGroups },
      // initgroups(user, group): the given group first, then the database's memberships.
      { name: 'ng', u: uid, g: 0, groups: [0, ...nobodyGroups.filter((x) => x !== gid)] },
      // Unknown numeric ids are taken as they are, with no supplementary groups.
      { name: 'num', u: 4_000_000, g: 4_000_001, groups: [] },
      { name: 'g', u: undefined, g: 0, groups: undefined },
      { name: 'plain', u: undefined, g: undefined, groups: undefined },
      { name: 'r', u: 0, g: 0, groups: id('-G', 'root').split(' ').map(Number) },
    ]);
    // As root, checks without a user, with a group only or as root itself are refused.
    expect(checksRunningAsRoot(digest, identities, 0)).toEqual(['g', 'plain', 'r']);
    expect(checksRunningAsRoot(digest, identities, 1000)).toEqual([]);
  });

  it('unknown names are errors naming the check and the field', async () => {
    const file = write({
      checks: [
        { id: 'u', command: 'x', interval: 1000, user: 'no-such-user-zz' },
        { id: 'g', command: 'x', interval: 1000, group: 'no-such-group-zz' },
        { id: 'n', command: 'x', interval: 1000, user: 4_000_000 },
      ],
    });
    await expect(resolvePairs(file, digestChecks(loadChecksFile(file).checks))).rejects.toThrow(new TypeError([
      `${file}: invalid checks file:`,
      '  checks[0] (id "u"): field "user": user "no-such-user-zz": no such user (getent passwd)',
      '  checks[1] (id "g"): field "group": group "no-such-group-zz": no such group (getent group)',
      '  checks[2] (id "n"): field "user": user 4000000 is not in the user database: give a group too',
    ].join('\n')));
  });

  it('looks up at most LOOKUPS_AT_ONCE pairs at a time, each once; aborted, starts no more', async () => {
    // 300 checks, 100 distinct (user, group) pairs: numeric ids, as a generated file might give.
    const digest = digestChecks(Array.from({ length: 300 }, (_, i) => ({
      definition: { id: `c${i}`, command: 'x', interval: 1000 }, user: String(2000 + (i % 100)), group: String(i % 100),
    })));
    let inFlight = 0;
    let most = 0;
    const asked: string[] = [];
    const lookup = (stop?: AbortController) => ({ resolve: async (user?: string, group?: string) => {
      asked.push(`${user}:${group}`);
      most = Math.max(most, ++inFlight);
      if (asked.length === 20) stop?.abort();
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight--;
      return { uid: Number(user), gid: Number(group), groups: [] };
    } });
    const identities = await resolvePairs('f', digest, lookup());
    expect(most).toBe(LOOKUPS_AT_ONCE);
    expect(asked).toEqual(Array.from({ length: 100 }, (_, p) => `${2000 + p}:${p}`));
    expect(identities.map((i) => i.uid)).toEqual(Array.from({ length: 100 }, (_, p) => 2000 + p));
    asked.length = 0;
    const stop = new AbortController();
    await expect(resolvePairs('f', digest, lookup(stop), stop.signal)).rejects.toThrow(/aborted/i);
    // The 20th started the abort; those already running finish, none starts after.
    expect(asked.length).toBeLessThanOrEqual(20 + LOOKUPS_AT_ONCE);
  });

  it('a directory that fails every check of a user: the first 1,000 named, the others counted', async () => {
    const file = write({ defaults: { interval: 1000 }, checks: [
      { id: 'ok', command: 'x' },
      ...Array.from({ length: 2500 }, (_, i) => ({ id: `c${i}`, command: 'x', user: 'no-such-user-zz' })),
    ] });
    const err = await resolvePairs(file, digestChecks(loadChecksFile(file).checks)).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(TypeError);
    const lines = (err as Error).message.split('\n');
    expect(lines).toHaveLength(1002);
    expect(lines[1]).toBe('  checks[1] (id "c0"): field "user": user "no-such-user-zz": no such user (getent passwd)');
    expect(lines[1000]).toBe('  checks[1000] (id "c999"): field "user": user "no-such-user-zz": no such user (getent passwd)');
    expect(lines[1001]).toBe('  … and 1500 more checks whose user or group could not be looked up');
  });
});

describe('values too deep to show', () => {
  it('a field nested 100,000 deep is a TypeError naming the file and the field, not a RangeError', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const lines = problems(`{"checks":[{"id":"a","command":"x","interval":"1m","args":${deep}}]}`);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^checks\[0\] \(id "a"\): field "args\[0\]": /);
    // What it got: its start (where JSON.stringify manages, as on Node 26) or its kind ("an array"); short either way.
    expect(lines[0].length).toBeLessThan(200);
  });
});

describe('YAML checks files load in linear time', () => {
  // The YAML parser builds a whole document tree, so it is slow per byte;
  // what matters is that odd shapes cost no more than plain ones of the
  // same size (a quadratic shape would be thousands of times slower here).
  it('adversarial 128 KiB YAML within 20x of a plain file of that size', () => {
    const size = 128 * 1024;
    const best = (file: string, rounds = 1) => {
      let ms = Infinity;
      for (let k = 0; k < rounds; k++) {
        const t0 = performance.now();
        try {
          loadChecksFile(file);
        } catch (err) {
          expect(err).toBeInstanceOf(TypeError);
        }
        ms = Math.min(ms, performance.now() - t0);
      }
      return ms;
    };
    const plain = best(write(`checks:\n${'  - {id: a, command: x, interval: 1s}\n'.repeat(size / 37)}`, 'yaml'), 2);
    for (const [name, text] of [
      ['nested flow', '['.repeat(size / 8)],
      ['colons', `a: ${'b: '.repeat(size / 3)}`],
      ['long flow list', `checks: [${'a, '.repeat(size / 3)}]`],
      ['aliases', `a: &x 1\n${'b: *x\n'.repeat(size / 6)}`],
      // The library's own unique-key check compared each key with every earlier one: ~9 s here.
      ['distinct keys', Array.from({ length: size / 10 }, (_, i) => `k${i}: 1\n`).join('')],
      ['repeated keys', 'b: 1\n'.repeat(size / 5)],
      ['dashes', '- '.repeat(size / 2)],
      ['blanks', `checks: ${' '.repeat(size)}x`],
      ['escapes', `"${'\\\\'.repeat(size / 2)}"`],
    ] as const) {
      expect(best(write(text, 'yaml')), name).toBeLessThan(Math.max(plain, 50) * 20);
    }
  }, 120_000);
});

describe('limits in checks files', () => {
  it('rlimits, nice, cgroup and cleanup per check and in defaults; limits merge by name, the check\'s winning', () => {
    const { checks } = loadChecksFile(write({
      defaults: { interval: '1m', rlimits: { nofile: 1024, core: 0 }, nice: 5, cleanup: false },
      checks: [
        { id: 'a', command: ['/bin/true'], rlimits: { as: '512M', nofile: { soft: 64, hard: 128 } } },
        { id: 'b', command: ['/bin/true'], nice: -2, cgroup: '/sys/fs/cgroup/checks', cleanup: true },
      ],
    }));
    expect(checks[0].definition).toMatchObject({ rlimits: { nofile: { soft: 64, hard: 128 }, core: 0, as: '512M' }, nice: 5, cleanup: false });
    expect(checks[1].definition).toMatchObject({ rlimits: { nofile: 1024, core: 0 }, nice: -2, cgroup: '/sys/fs/cgroup/checks', cleanup: true });
  });

  it('a bad limit names the check and the field, and says what the field takes', () => {
    const lines = problems({
      checks: [
        { id: 'a', command: ['/bin/true'], interval: '1m', rlimits: { nofil: 1 } },
        { id: 'b', command: ['/bin/true'], interval: '1m', nice: 40 },
        { id: 'c', command: ['/bin/true'], interval: '1m', cgroup: 'relative' },
        { id: 'd', command: ['/bin/true'], interval: '1m', rlimits: { nofile: { soft: 9, hard: 1 } } },
      ],
    });
    expect(lines[0]).toMatch(/^checks\[0\] \(id "a"\): field "rlimits": expected an object of limits like \{ "nofile": 1024, "as": "512M", "core": 0 \} \(names as, core, cpu.*got \{"nofil":1\}$/);
    expect(lines[1]).toBe('checks[1] (id "b"): field "nice": expected a whole number from -20 to 19, got 40');
    expect(lines[2]).toBe('checks[2] (id "c"): field "cgroup": expected the absolute path of a cgroup v2 directory, got "relative"');
    expect(lines[3]).toMatch(/^checks\[3\] \(id "d"\): field "rlimits": expected .*soft ≤ hard\), got \{"nofile":\{"soft":9,"hard":1\}\}$/);
  });
});
