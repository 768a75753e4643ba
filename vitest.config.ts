import { defineConfig } from 'vitest/config';

/**
 * Files that replace a module (`vi.mock`): they run each in a fresh worker, since a module already
 * loaded by an earlier file in a shared worker would keep its real implementation (and a mock
 * could outlive its file).
 */
const ISOLATED = ['test/format/file.test.ts', 'test/observe/metrics-missing.test.ts', 'test/cli/checkpoint-sync.test.ts', 'test/engine/checkpoint-fallback.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores on CI: run files in parallel but keep each worker's heap modest.
    pool: 'forks',
    // Two files at a time, whatever the machine reports: vitest's default is one worker fewer
    // than os.availableParallelism(), which on a 2-core machine is one worker, and the suite then
    // took 830 s alone (CI 943 s, over its 15-minute budget); with two, 4 freshness files took
    // 19.9 s instead of 34.2 s.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: ISOLATED,
          // A worker runs file after file with its modules loaded once: the suite spent 250 s of
          // its 2 workers' time importing the same modules afresh for each of 246 files (vitest's
          // "import" figure), and took 777 s of wall time in CI against 559–563 s shared
          // (measured on this machine, in file order and shuffled). Module state the tests set
          // (`setDiskIo`, `setStoreFileWriter`, `setMemoryBudgetFloor`) is reset in their
          // afterEach; no test file sets process.env or fake timers.
          isolate: false,
        },
      },
      { extends: true, test: { name: 'isolated', include: ISOLATED, isolate: true } },
    ],
  },
});
