import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores on CI: run files in parallel but keep each worker's heap modest.
    pool: 'forks',
    // Two files at a time, whatever the machine reports: vitest's default is one worker fewer
    // than os.availableParallelism(), which on a 2-core machine is one worker, and the suite then
    // took 830 s alone (CI 943 s, over its 15-minute budget); with two, 4 freshness files took
    // 19.9 s instead of 34.2 s.
    maxWorkers: 2,
  },
});
