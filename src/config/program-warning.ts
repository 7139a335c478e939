// `noshell run --check`: a check whose program is an absolute path that is not
// there (a plugin package not installed, a typo in $USER1$) or not executable
// would end UNKNOWN at every run; say so before it runs, once per path.
import { statSync } from 'node:fs';
import type { CheckDefinition } from '../check/runner/runner';
import { parseCommand } from '../command/parse-command';
import { quoteName, quoteText } from '../util/quote-text';
import { countOf } from '../util/count-text';

/** The programs a definition runs (every stage of a pipeline or list), when it names them without a shell. */
function programsOf(def: CheckDefinition): string[] {
  const { command } = def;
  if (typeof command !== 'string') return [command[0]];
  const parsed = parseCommand(command);
  if (parsed.needsShell && def.shell === undefined) return [];
  return parsed.list.flatMap((p) => p.stages.map((st) => st.argv[0]).filter((a) => a !== undefined));
}

/** Why `path` cannot be run, or null. */
function notRunnable(path: string): string | null {
  try {
    const st = statSync(path);
    if (!st.isFile()) return 'is not a file';
    if ((st.mode & 0o111) === 0) return 'is not executable';
    return null;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'does not exist' : `cannot be looked at (${code ?? 'error'})`;
  }
}

/** Lines to print (without newline): one per absolute program path that cannot run. */
export function programWarnings(file: string, defs: readonly (CheckDefinition | undefined)[]): string[] {
  const byPath = new Map<string, string[]>();
  for (const def of defs) {
    if (def === undefined) continue;
    for (const program of new Set(programsOf(def))) {
      if (!program.startsWith('/')) continue;
      let ids = byPath.get(program);
      if (ids === undefined) byPath.set(program, (ids = []));
      ids.push(def.id);
    }
  }
  const lines: string[] = [];
  for (const [program, ids] of byPath) {
    const why = notRunnable(program);
    if (why === null) continue;
    const shown = ids.slice(0, 5).map(quoteName).join(', ') + (ids.length > 5 ? ', …' : '');
    lines.push(`${file}: warning: ${quoteText(program)} ${why}: ${countOf(ids.length, 'check')} (${shown}) would end UNKNOWN`);
  }
  return lines;
}
