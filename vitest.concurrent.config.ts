import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// `npm test`: unit, CLI and kernel-backed tests, in one run and one report (.ci/run reads its JSON).
// Needs nothing outside this repo but Node: the kernel-backed suites (test/kernel) run when this
// machine has root and the tools, else they are skipped and the closing banner says so
// (test/helpers/kernel-reporter.ts). In CI and in `npm run test:kernel` they are required: missing
// tools fail the run. The same holds for the browser-backed test of the HTML report (a Chromium;
// `npm run test:browser`). Layout and timings: docs/testing.md.

/** Files that send real packets and measure splits and timeouts: one at a time, after the rest. */
export const KERNEL_FILES = ['test/kernel/**/*.test.ts'];

/**
 * Files that open kpx's HTML output in headless Chromium (test/helpers/browser-env.ts): a project of
 * their own, not the unit one — a browser takes a core and hundreds of MB, so it runs alone, after
 * the unit and kernel files (never beside the kernel suites' timing-sensitive senders); not the
 * kernel one — it needs no root and no kernel tools, and `npm run test:kernel` does not need a browser.
 */
export const BROWSER_FILES = ['test/browser/**/*.test.ts'];

/**
 * Workers for the unit project: vitest's default (one per core but one), and at least two — on a
 * 2-core machine its default is one, and a test waiting on a child process then idles a core.
 * KPX_TEST_WORKERS overrides.
 */
const workers = Number(process.env.KPX_TEST_WORKERS) || Math.max(2, availableParallelism() - 1);

export default defineConfig({
  test: {
    // Bounds for a hang, not for speed: on the shared 2-core machine at load 45 a fault test's nine
    // kpx runs on one bundle, and kernel tests waiting on `kpx collect` in namespaces and on real
    // connections, took over 120 s.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: workers,
    minWorkers: 1,
    // `--reporter` on the command line replaces these: pass the kernel reporter again (see .ci/run).
    reporters: ['default', './test/helpers/kernel-reporter.ts'],
    // A late answer to a progress report is not a failure (see the file).
    setupFiles: ['./test/helpers/rpc-patience.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          // Files share their worker process (one after another): no process start and no fresh
          // import of src/ per file, about 0.6 CPU s each. file-state.ts puts back what a file
          // changed in the process (environment, working directory, exit code).
          isolate: false,
          setupFiles: ['./test/helpers/file-state.ts'], // after the root's rpc-patience.ts (arrays merge)
          exclude: ['test/corpus/**', ...KERNEL_FILES, ...BROWSER_FILES, 'node_modules/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'kernel',
          include: KERNEL_FILES,
          // After every unit file has finished, one file at a time in one process: no other test
          // competes for the CPUs the harness pins its senders and the node's receive queues to.
          // (Two files at a time was tried: in a quiet CI rehearsal a 2-endpoint ladder then saw
          // 69 of 400 packets dropped — the senders compete — so the kernel files stay serial.)
          sequence: { groupOrder: 0 },
          pool: 'threads',
          poolOptions: { threads: { singleThread: true } },
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: BROWSER_FILES,
          sequence: { groupOrder: 2 },
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
