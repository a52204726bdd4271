import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// `npm run test:kernel`: only the kernel-backed suites, and they must run — on a machine without
// root or the tools every file fails, naming what is missing, instead of being skipped.
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/kernel/**/*.test.ts'],
    env: { KPX_REQUIRE_KERNEL: '1' },
  },
});
