// README.md and docs/ as a user reads them: every code block that is meant to
// run runs, as a normal user (nobody) in an empty directory, with `noshell`
// on PATH and popen-noshell importable; TypeScript blocks type-check in a
// strict project first. Every relative link resolves, every command, option
// and public export is documented, the example files the docs show are the
// files shipped, and they pass their tools (systemd-analyze, promtool).
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/help';
import { asNobody, isRoot, NOBODY, removeUnprivilegedCopy, unprivilegedPackage } from '../unprivileged';

const ROOT = path.resolve(__dirname, '..', '..');
const PAGES = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const text = (page: string) => readFileSync(path.join(ROOT, page), 'utf8');

interface Block { page: string; line: number; lang: string; run: boolean; body: string }

/** The fenced blocks of a page: ```lang [norun] … ``` at the start of a line. */
function blocksOf(page: string): Block[] {
  const blocks: Block[] = [];
  let open: Block | null = null;
  text(page).split('\n').forEach((line, i) => {
    if (open === null && line.startsWith('```') && line.length > 3) {
      const [lang, ...flags] = line.slice(3).trim().split(' ');
      open = { page, line: i + 1, lang, run: !flags.includes('norun'), body: '' };
    } else if (open !== null && line.startsWith('```')) {
      blocks.push(open);
      open = null;
    } else if (open !== null) open.body += `${line}\n`;
  });
  expect(open, `${page}: a block is not closed`).toBeNull();
  return blocks;
}

const ALL = PAGES.flatMap(blocksOf);
const RUN = ALL.filter((b) => b.run && (b.lang === 'sh' || b.lang === 'ts'));
const name = (b: Block) => `${b.page}:${b.line} (${b.lang})`;

describe('README.md', () => {
  it('is a landing page: at most 300 lines, with the two set-up commands', () => {
    const readme = text('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    expect(readme).toContain('npm run bench');
    expect(readme).toContain('npm test');
  });
});

describe('README.md and docs/', () => {
  it('hold no internal issue number and no dated story', () => {
    for (const page of PAGES) {
      const lines = text(page).split('\n');
      lines.forEach((line, i) => {
        expect(line, `${page}:${i + 1}`).not.toMatch(/\bissues? #?\d{1,3}\b|\(#\d{1,3}\)/i);
        expect(line, `${page}:${i + 1}`).not.toMatch(/\b(?:on|since|until|before|after|again on) 20\d\d-\d\d-\d\d\b/i);
      });
    }
  });

  it('only use known block languages, and mark blocks not to run with norun', () => {
    const known = new Set(['sh', 'ts', 'text', 'console', 'yaml', 'json', 'ini', 'promql', 'c', 'js']);
    for (const b of ALL) expect(known.has(b.lang), name(b)).toBe(true);
    expect(RUN.length).toBeGreaterThan(20);
  });

  // GitHub's anchors: lower case, punctuation but - and _ dropped, spaces to -.
  const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
  const anchorsOf = (page: string) => {
    const seen = new Map<string, number>();
    const out = new Set<string>();
    let fence = false;
    for (const line of text(page).split('\n')) {
      if (line.startsWith('```')) fence = !fence;
      if (fence || !line.startsWith('#')) continue;
      const base = slug(line.replace(/^#+/, '').replace(/`/g, ''));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    return out;
  };

  it('link only to files and headings that exist', () => {
    const problems: string[] = [];
    for (const page of PAGES) {
      let fence = false;
      text(page).split('\n').forEach((line, i) => {
        if (line.startsWith('```')) fence = !fence;
        if (fence) return;
        for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          const target = m[1];
          if (/^[a-z]+:/.test(target)) continue;
          const [file, anchor] = target.split('#');
          const resolved = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
          if (!existsSync(path.join(ROOT, resolved))) problems.push(`${page}:${i + 1}: ${target} (no ${resolved})`);
          else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
            problems.push(`${page}:${i + 1}: ${target} (no heading #${anchor} in ${resolved})`);
          }
        }
      });
    }
    expect(problems).toEqual([]);
  });

  it('document every public export somewhere in docs/', () => {
    const docs = PAGES.filter((p) => p.startsWith('docs/')).map(text).join('\n');
    // The names the root exports, values and types, as its declarations give them.
    const program = ts.createProgram([path.join(ROOT, 'src', 'index.ts')], { strict: true, skipLibCheck: true, types: ['node'] });
    const checker = program.getTypeChecker();
    const names = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(path.join(ROOT, 'src', 'index.ts'))!)!).map((s) => s.name);
    expect(names.length).toBeGreaterThan(80);
    expect(names.filter((n) => !new RegExp(`\\b${n}\\b`).test(docs))).toEqual([]);
  });

  it('document every command and every option the CLI help prints, in docs/cli.md', () => {
    const cli = text('docs/cli.md');
    const missing: string[] = [];
    for (const c of COMMANDS) {
      if (!cli.includes(`noshell ${c.name}`)) missing.push(c.name);
      for (const [option] of c.options) if (!cli.includes(option.trim())) missing.push(`${c.name} ${option.trim()}`);
    }
    expect(missing).toEqual([]);
  });
});

describe('examples/: the files the docs show', () => {
  const shipped = ['systemd', 'logrotate', 'prometheus'].flatMap((d) =>
    readdirSync(path.join(ROOT, 'examples', d)).map((f) => `examples/${d}/${f}`));

  it.each(shipped)('%s is shown in docs/ exactly as shipped', (file) => {
    const body = readFileSync(path.join(ROOT, file), 'utf8');
    expect(ALL.some((b) => b.page.startsWith('docs/') && b.body === body), `no block in docs/ holds ${file} as it is`).toBe(true);
  });

  it('the systemd units pass systemd-analyze verify', () => {
    const units = shipped.filter((f) => f.endsWith('.service'));
    expect(units.length).toBeGreaterThanOrEqual(2);
    const which = spawnSync('sh', ['-c', 'command -v systemd-analyze'], { encoding: 'utf8' });
    if (which.status !== 0) {
      console.log('skipped: systemd-analyze is not installed (Debian: systemd)');
      return;
    }
    // The check reads units from a root directory: there the units, a stub
    // at each absolute path an Exec line runs (the installed command need not
    // be installed here), and the system's targets the units name.
    const dir = mkdtempSync(path.join(ROOT, 'test-results', 'units-'));
    try {
      mkdirSync(path.join(dir, 'etc', 'systemd', 'system'), { recursive: true });
      mkdirSync(path.join(dir, 'usr', 'lib', 'systemd', 'system'), { recursive: true });
      for (const unit of units) {
        const body = readFileSync(path.join(ROOT, unit), 'utf8');
        writeFileSync(path.join(dir, 'etc', 'systemd', 'system', path.basename(unit)), body);
        for (const m of body.matchAll(/^Exec\w+=[-@:+!]*(\/\S+)/gm)) {
          mkdirSync(path.join(dir, path.dirname(m[1])), { recursive: true });
          writeFileSync(path.join(dir, m[1]), '#!/bin/sh\n', { mode: 0o755 });
        }
      }
      const system = '/usr/lib/systemd/system';
      for (const f of readdirSync(system).filter((t) => t.endsWith('.target'))) {
        if (statSync(path.join(system, f)).isFile()) writeFileSync(path.join(dir, 'usr', 'lib', 'systemd', 'system', f), readFileSync(path.join(system, f)));
      }
      const r = spawnSync('systemd-analyze', ['verify', `--root=${dir}`, ...units.map((u) => path.basename(u))], { encoding: 'utf8' });
      expect(r.stderr + r.stdout).toBe('');
      expect(r.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the Prometheus configuration passes promtool check config', () => {
    const promtool = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' });
    if (promtool.status !== 0) {
      console.log('skipped: promtool is not installed (Debian: prometheus)');
      return;
    }
    for (const file of shipped.filter((f) => f.startsWith('examples/prometheus/') && /\.ya?ml$/.test(f))) {
      const r = spawnSync('promtool', ['check', 'config', '--syntax-only', path.join(ROOT, file)], { encoding: 'utf8' });
      expect(r.status, r.stdout + r.stderr).toBe(0);
    }
  });
});

describe.runIf(RUN.length > 0)('every block meant to run runs, as a normal user', () => {
  // A world-readable copy of the package (the checkout may sit in a 0700
  // directory), installed into a consumer directory the blocks run in.
  let consumer = '';
  let env: NodeJS.ProcessEnv = {};
  beforeAll(() => {
    const copy = path.dirname(path.dirname(unprivilegedPackage()));
    consumer = path.join(copy, 'consumer');
    mkdirSync(path.join(consumer, 'node_modules', '@types'), { recursive: true });
    symlinkSync(copy, path.join(consumer, 'node_modules', 'popen-noshell'));
    symlinkSync(path.join(ROOT, 'node_modules', '@types', 'node'), path.join(consumer, 'node_modules', '@types', 'node'));
    const bin = path.join(consumer, 'bin');
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'noshell'), `#!/bin/sh\nexec ${process.execPath} ${path.join(copy, 'dist', 'cli.js')} "$@"\n`, { mode: 0o755 });
    symlinkSync(process.execPath, path.join(bin, 'node'));
    env = { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, LANG: 'C.UTF-8' };
    // TypeScript first: each ts block a module of a strict project, as a user's would be.
    const files = RUN.filter((b) => b.lang === 'ts').map((b, i) => {
      const file = `block-${i}.mts`;
      writeFileSync(path.join(consumer, file), b.body);
      return file;
    });
    writeFileSync(path.join(consumer, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2022', strict: true,
        exactOptionalPropertyTypes: true, noEmit: true, skipLibCheck: true, types: ['node'] },
      files,
    }));
    const tsc = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', consumer], { encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr, 'the ts blocks type-check (block-N is the Nth ts block to run)').toBe('');
    spawnSync('chmod', ['-R', 'a+rX', consumer]);
    if (!isRoot) console.warn('skipped: running the blocks as nobody needs root; they run as this user');
  }, 240_000);
  afterAll(removeUnprivilegedCopy);

  it.each(RUN.map((b) => [name(b), b] as const))('%s', (_name, b) => {
    const work = mkdtempSync(path.join(consumer, 'work-'));
    if (isRoot) chownSync(work, NOBODY, NOBODY);
    chmodSync(work, 0o755);
    let argv: string[];
    if (b.lang === 'ts') {
      const js = ts.transpileModule(b.body, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
      writeFileSync(path.join(work, 'block.mjs'), js, { mode: 0o644 });
      argv = [process.execPath, 'block.mjs'];
    } else {
      writeFileSync(path.join(work, 'block.sh'), b.body, { mode: 0o644 });
      argv = ['bash', '-e', 'block.sh'];
    }
    const full = isRoot ? [...asNobody, ...argv] : argv;
    const r = spawnSync(full[0], full.slice(1), { cwd: work, env: { ...env, HOME: work }, encoding: 'utf8', timeout: 60_000 });
    expect({ status: r.status, signal: r.signal }, `${name(b)}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`).toEqual({ status: 0, signal: null });
  }, 90_000);
});
