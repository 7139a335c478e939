// The share of real monitoring command lines (test/fixtures/command-corpus.json:
// Debian's installed configs and public Nagios, Naemon, Icinga, Shinken,
// Puppet and Chef configurations, macros expanded as Nagios would) that run
// without a shell, and why the rest need one. `node scripts/command-corpus.mjs`
// prints the whole table.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/index';

interface Entry { source: string; raw: string; expanded: string }
const corpus = JSON.parse(readFileSync(path.join(__dirname, '..', 'fixtures', 'command-corpus.json'), 'utf8')) as { entries: Entry[] };

describe('real command lines', () => {
  it('run without a shell, pipelines and redirections included', () => {
    const entries = corpus.entries;
    expect(entries.length).toBeGreaterThanOrEqual(1500);
    const needing = entries.filter((e) => parseCommand(e.expanded).needsShell);
    const reasons = new Map<string, number>();
    for (const e of needing) for (const r of parseCommand(e.expanded).reasons) reasons.set(r, (reasons.get(r) ?? 0) + 1);
    // 1,488 of 1,500 (99.2 %); the rest need a variable, $(…), $((…)), dash's echo, or hold a C1 control character.
    expect(entries.length - needing.length).toBeGreaterThanOrEqual(1488);
    expect([...reasons.keys()].sort()).toEqual(['arithmetic', 'builtin', 'command substitution', 'control character', 'variable']);
    const shapes = { pipelines: 0, redirections: 0, lists: 0 };
    for (const e of entries) {
      const p = parseCommand(e.expanded);
      if (p.needsShell) continue;
      if (p.list.length > 1) shapes.lists++;
      if (p.list.some((pl) => pl.stages.length > 1)) shapes.pipelines++;
      if (p.list.some((pl) => pl.stages.some((st) => st.redirects.length > 0))) shapes.redirections++;
    }
    // Without pipelines, lists and redirections these 65 would need /bin/sh (94.9 %).
    expect(shapes).toEqual({ pipelines: 41, redirections: 22, lists: 2 });
  });
});
