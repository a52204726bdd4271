import { defineConfig } from 'vitest/config';

// `npm test`: unit, CLI and kernel-backed tests. Needs nothing outside this repo.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/corpus/**', 'node_modules/**'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Kernel tests send real packets and measure splits and timeouts: one file at a time, so no other
    // file competes for the CPUs the harness pins its senders and the node's receive queues to.
    fileParallelism: false,
    pool: 'forks',
  },
});
