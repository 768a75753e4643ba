import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores on CI: run files in parallel but keep each worker's heap modest.
    pool: 'forks',
  },
});
