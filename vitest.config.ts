import { defineConfig } from 'vitest/config';

// `npm test`: unit, CLI and kernel-backed tests. Needs nothing outside this repo.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/corpus/**', 'node_modules/**'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Kernel tests create namespaces; keep files from stepping on each other's CPU budget.
    fileParallelism: true,
    pool: 'forks',
  },
});
