import { defineConfig } from 'vitest/config';

// `npm run test:corpus`: tests over ../shared/corpus (absent on a fresh machine elsewhere).
export default defineConfig({
  test: {
    include: ['test/corpus/**/*.test.ts'],
    testTimeout: 120_000,
  },
});
