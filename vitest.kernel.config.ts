import { defineConfig } from 'vitest/config';
import { KERNEL_FILES } from './vitest.config.js';

// `npm run test:kernel`: only the kernel-backed suites, one file at a time, and they must run — on a
// machine without root or the tools every file fails, naming what is missing, instead of being skipped.
export default defineConfig({
  test: {
    include: KERNEL_FILES,
    // Bounds for a hang, not for speed (see vitest.config.ts, the kernel project).
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    fileParallelism: false,
    env: { KPX_REQUIRE_KERNEL: '1' },
    reporters: ['default', './test/helpers/kernel-reporter.ts'],
    // A late answer to a progress report is not a failure (see the file).
    setupFiles: ['./test/helpers/rpc-patience.ts'],
  },
});
