import { defineConfig } from 'vitest/config';

// `npm test`: unit, CLI and kernel-backed tests. Needs nothing outside this repo but Node: the
// kernel-backed suites (test/kernel) run when this machine has root and the tools, else they are
// skipped and the closing banner says so (test/helpers/kernel-reporter.ts). In CI and in
// `npm run test:kernel` they are required: missing tools fail the run.
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
    // `--reporter` on the command line replaces these: pass the kernel reporter again (see .ci/run).
    reporters: ['default', './test/helpers/kernel-reporter.ts'],
  },
});
