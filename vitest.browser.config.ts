import { defineConfig } from 'vitest/config';
import { BROWSER_FILES } from './vitest.config.js';

// `npm run test:browser`: only the browser-backed tests (the HTML report in headless Chromium), and
// they must run — without a Chromium (KPX_CHROMIUM, or chromium on PATH) they fail, naming what is missing.
export default defineConfig({
  test: {
    include: BROWSER_FILES,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
    env: { KPX_REQUIRE_BROWSER: '1' },
    reporters: ['default', './test/helpers/kernel-reporter.ts'],
    setupFiles: ['./test/helpers/rpc-patience.ts'],
  },
});
