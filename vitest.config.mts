import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Files that must not share the CPU (or the machine) with another test file.
// They run after the shared group, one at a time. A file belongs here when it
// asserts a wall-clock figure that another process's load would move (the
// loop-delay windows, time ratios of the linear-time checks), or when it
// counts processes machine-wide (RLIMIT_NPROC of a uid, every nagios4).
// Every other file counts only its own process's fds and children, listens
// on port 0 and works in a mkdtemp directory of its own: two at a time.
const SOLO = [
  'test/bench/bench-loop-delay.test.ts', // p50 of an idle loop's delay < 5 ms
  'test/daemon/loop-delay-report.test.ts', // pins itself and two busy loops to CPU 0
  'test/check/check-parse.test.ts', // linear-time ratios (test/linear-time.ts)
  'test/util/duration.test.ts', // linear-time ratios
  'test/robustness/fuzz.test.ts', // linear-time ratios
  'test/robustness/fault-injection.test.ts', // RLIMIT_NPROC counts every process of its uid; spawn timings
  'test/bench/vs-nagios.test.ts', // counts every nagios4 on the machine; a benchmark
];

// Started first within the shared group, longest first, so that no long file
// starts last and leaves one worker idle at the end. Vitest orders by the
// durations in its cache when it has them; a fresh clone has none, and orders
// by file size, which puts a 55 s file among the last. Measured one at a
// time (Node 20, 2 cores): the files over 8 s.
const LONGEST = [
  'test/package/examples.test.ts',
  'test/package/install.test.ts',
  'test/robustness/soak.test.ts',
  'test/gearman/gearman-defaults.test.ts',
  'test/package/arm64.test.ts',
  'test/bench/bench-scale.test.ts',
  'test/cli/cli.test.ts',
  'test/metrics/metrics-server.test.ts',
  'test/package/prepack.test.ts',
  'test/package/package-hygiene.test.ts',
  'test/cli/cli-signals.test.ts',
  'test/gearman/gearman-hardening.test.ts',
  'test/metrics/prometheus-scrape.test.ts',
  'test/process/env-race.test.ts',
  'test/native/native.test.ts',
  'test/process/executor.test.ts',
  'test/process/spawn.test.ts',
  'test/gearman/gearman-client.test.ts',
  'test/gearman/gearman-interop.test.ts',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const i = LONGEST.findIndex((f) => spec.moduleId.endsWith(`/${f}`));
      return i < 0 ? LONGEST.length : i;
    };
    // Stable: within a group, the listed files first in their order, the rest as vitest had them.
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => a.spec.project.config.sequence.groupOrder - b.spec.project.config.sequence.groupOrder ||
        rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}

// Each project's own options (a project that extends the root config would
// run the global setup again: once for the root, once for each project).
const common = {
  // Spawning suites count fds and children of their own process: one file per process.
  pool: 'forks',
  testTimeout: 30_000,
  hookTimeout: 60_000,
} as const;

export default defineConfig({
  test: {
    // Builds the C fixtures and dist/, once for the run.
    globalSetup: ['test/global-setup.ts'],
    // The JSON report lets .ci/run print a plain "N passed, N failed" line;
    // file-times what each file took, hooks included (the slowest in CI's summary).
    reporters: ['default', 'json', './test/reporters/file-times.ts'],
    outputFile: { json: 'test-results/vitest.json' },
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        test: {
          ...common,
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: SOLO,
          // Two files at a time on the 2-core machine.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...common,
          name: 'solo',
          include: SOLO,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
