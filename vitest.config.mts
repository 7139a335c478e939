import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Spawning suites count fds and children of their own process: one file
    // per process, and files one after another on a 2-core machine.
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 30_000,
    // The JSON report lets .ci/run print a plain "N passed, N failed" line.
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/vitest.json' },
    hookTimeout: 60_000,
  },
});
