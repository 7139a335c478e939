// A vitest reporter: what each test file took, its hooks and import included
// (vitest's JSON report times the tests alone: a beforeAll that packs a
// tarball is not in it). Written beside the JSON report, as NAME.times.json
// for NAME.json; .ci/run prints the slowest files of all its runs from these.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';

export interface FileTime {
  file: string;
  project: string;
  ms: number;
  state: string;
}

export default class FileTimes implements Reporter {
  private out: string | null = null;
  private started = 0;

  onInit(vitest: Vitest): void {
    this.started = Date.now();
    const o = vitest.config.outputFile;
    const json = typeof o === 'string' ? o : o?.json;
    if (json === undefined) return;
    const abs = path.resolve(vitest.config.root, json);
    this.out = abs.endsWith('.json') ? `${abs.slice(0, -'.json'.length)}.times.json` : `${abs}.times.json`;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    if (this.out === null) return;
    const files: FileTime[] = modules.map((m) => {
      const d = m.diagnostic();
      return {
        file: m.relativeModuleId,
        project: m.project.name,
        ms: Math.round(d.prepareDuration + d.setupDuration + d.collectDuration + d.duration),
        state: m.state(),
      };
    }).sort((a, b) => b.ms - a.ms);
    mkdirSync(path.dirname(this.out), { recursive: true });
    writeFileSync(this.out, `${JSON.stringify({ wallMs: Date.now() - this.started, files }, null, 1)}\n`);
  }
}
