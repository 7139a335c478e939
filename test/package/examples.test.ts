// Issue 20: the shipped example checks files run clean for whoever runs them.
// checks.json / checks.yaml have no user/group (a normal user's first run used
// to turn every check UNKNOWN: EPERM at setgroups); checks-as-root.yaml shows
// `user:` for a noshell started as root, and `--check` warns a normal user
// that it cannot switch users. Real runs of each file, as nobody and as root,
// until every check has reported once. First runs are spread over each check's
// interval (up to 2 min in these files: a minute of waiting), so the runs use
// copies whose every interval is cut to 3 s, the rest of each file as shipped.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asNobody, isRoot, removeUnprivilegedCopy, unprivilegedPackage } from '../unprivileged';

const ROOT = path.resolve(__dirname, '..', '..');
let cli: string;
let examples: string;

beforeAll(() => {
  const entry = unprivilegedPackage();
  const copy = path.dirname(path.dirname(entry));
  cli = path.join(copy, 'dist', 'cli.js');
  examples = path.join(copy, 'examples');
  cpSync(path.join(ROOT, 'examples'), examples, { recursive: true });
  spawnSync('chmod', ['-R', 'a+rX', examples]);
});
afterAll(removeUnprivilegedCopy);

if (!isRoot) console.warn('skipped: the examples as nobody and as root need root (setpriv)');

interface Result { id: string; stateName: string; output: string; spawnError?: string }

/** Runs `noshell run FILE` until each of `ids` reported once (or the deadline), then SIGTERM. */
function runUntilAllReported(prefix: string[], file: string, ids: Set<string>, deadlineMs = 100_000): Promise<{ results: Result[]; stderr: string; code: number | null }> {
  return new Promise((resolve) => {
    const argv = [...prefix, process.execPath, cli, 'run', path.join(examples, file)];
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    const results: Result[] = [];
    let stdout = '';
    let stderr = '';
    const seen = new Set<string>();
    // Once: results still come after it (the checks running at the signal), and a second
    // SIGTERM that lands after noshell has removed its handlers kills it by the signal.
    let signalled = false;
    const stop = () => {
      if (!signalled) child.kill('SIGTERM');
      signalled = true;
    };
    const timer = setTimeout(stop, deadlineMs);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      let nl: number;
      while ((nl = stdout.indexOf('\n')) >= 0) {
        const r = JSON.parse(stdout.slice(0, nl)) as Result;
        stdout = stdout.slice(nl + 1);
        results.push(r);
        seen.add(r.id);
        if ([...ids].every((id) => seen.has(id))) stop();
      }
    });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ results, stderr, code });
    });
  });
}

/**
 * A copy of an example beside it (NAME.fast.EXT) whose every `interval` is 3 s;
 * returns its name. Fails if the file does not have the four intervals it ships.
 */
function withShortIntervals(file: string): string {
  const text = readFileSync(path.join(examples, file), 'utf8');
  let changed = 0;
  let out: string;
  if (file.endsWith('.json')) {
    const json = JSON.parse(text) as { defaults: { interval?: string }; checks: Array<{ interval?: string }> };
    for (const o of [json.defaults, ...json.checks]) {
      if (o.interval !== undefined) {
        o.interval = '3s';
        changed++;
      }
    }
    out = JSON.stringify(json, null, 2);
  } else {
    out = text.split('\n').map((line) => {
      const at = line.indexOf('interval: ');
      if (at < 0 || line.slice(0, at).trim() !== '') return line;
      changed++;
      return `${line.slice(0, at)}interval: 3s`;
    }).join('\n');
  }
  expect(changed, file).toBe(4);
  const fast = file.replace(/\.(json|yaml)$/, '.fast.$1');
  writeFileSync(path.join(examples, fast), out, { mode: 0o644 });
  return fast;
}

function idsOf(file: string): Set<string> {
  const out = spawnSync(process.execPath, ['-e', `
    const { loadChecksFile } = require(${JSON.stringify(path.join(ROOT, 'dist', 'config', 'checks-file.js'))});
    console.log(JSON.stringify(loadChecksFile(${JSON.stringify(path.join(ROOT, 'examples', file))}).checks.map((c) => c.definition.id)));`], { encoding: 'utf8' });
  return new Set(JSON.parse(out.stdout) as string[]);
}

function expectClean(results: Result[], ids: Set<string>): void {
  expect(new Set(results.map((r) => r.id))).toEqual(ids);
  for (const r of results) {
    // A real answer from each plugin (CRITICAL for a closed ssh port is one), never a start failure.
    expect(r.spawnError, JSON.stringify(r)).toBeUndefined();
    expect(r.output, JSON.stringify(r)).not.toMatch(/Could not run plugin|EPERM|cannot start/);
  }
}

describe.runIf(isRoot)('examples/', () => {
  it('holds checks.json, checks.yaml and checks-as-root.yaml, the same eight checks', () => {
    // Beside them, the service files the operations page shows (docs.test.ts checks those).
    expect(readdirSync(path.join(ROOT, 'examples')).sort()).toEqual(['checks-as-root.yaml', 'checks.json', 'checks.yaml', 'logrotate', 'prometheus', 'systemd']);
    const ids = idsOf('checks.json');
    expect(ids.size).toBe(8);
    expect(idsOf('checks.yaml')).toEqual(ids);
    expect(idsOf('checks-as-root.yaml')).toEqual(ids);
  });

  it('--check: valid for a normal user; checks-as-root.yaml warns that it cannot switch users', () => {
    for (const file of ['checks.json', 'checks.yaml']) {
      const r = spawnSync(asNobody[0], [...asNobody.slice(1), process.execPath, cli, 'run', '--check', path.join(examples, file)], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${path.join(examples, file)}: valid, 8 checks\n`);
      expect(r.stderr).toBe('');
    }
    const file = path.join(examples, 'checks-as-root.yaml');
    const r = spawnSync(asNobody[0], [...asNobody.slice(1), process.execPath, cli, 'run', '--check', file], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe(`${file}: warning: 8 checks ("load", "root-disk", "procs", "zombies", "users", …) ask to run as user "nobody", group "nogroup"; ` +
      'this process (uid 65534) is not root and cannot switch users, so each would end UNKNOWN (EPERM at setgroups). ' +
      'Run noshell as root, or leave user/group out to run the checks as yourself.\n');
    expect(r.stdout).toBe(`${file}: valid, 8 checks\n`);
    // As root it can: no warning.
    const asRoot = spawnSync(process.execPath, [cli, 'run', '--check', file], { encoding: 'utf8' });
    expect(asRoot.stdout).toBe(`${file}: valid, 8 checks\n`);
    expect(asRoot.stderr).toBe('');
  });

  it('as root, checks.json is refused (plugins never run as root unasked), naming the example to use instead', () => {
    const r = spawnSync(process.execPath, [cli, 'run', path.join(examples, 'checks.json')], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('refusing to run checks as root');
    expect(r.stderr).toContain('Give them a "user"');
  });

  it('noshell run: checks.json as nobody and checks-as-root.yaml as root (intervals cut to 3 s), every check answers, none fails to start', async () => {
    const ids = idsOf('checks.json');
    const [nobody, root] = await Promise.all([
      runUntilAllReported(asNobody, withShortIntervals('checks.json'), ids, 30_000),
      runUntilAllReported([], withShortIntervals('checks-as-root.yaml'), ids, 30_000),
    ]);
    expectClean(nobody.results, ids);
    expectClean(root.results, ids);
    for (const run of [nobody, root]) {
      expect(run.stderr).not.toContain('warning');
      expect(run.code).toBe(143); // stopped by our SIGTERM: 128 + 15
    }
  }, 60_000);
});
