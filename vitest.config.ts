import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// `npm test`: unit, CLI and kernel-backed tests, in one run and one report (.ci/run reads its JSON).
// Needs nothing outside this repo but Node: the kernel-backed suites (test/kernel) run when this
// machine has root and the tools, else they are skipped and the closing banner says so
// (test/helpers/kernel-reporter.ts). In CI and in `npm run test:kernel` they are required: missing
// tools fail the run. Layout and timings: docs/testing.md.

/** Files that send real packets and measure splits and timeouts: after the rest, two at a time. */
export const KERNEL_FILES = ['test/kernel/**/*.test.ts'];

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
          exclude: ['test/corpus/**', ...KERNEL_FILES, 'node_modules/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'kernel',
          include: KERNEL_FILES,
          // After every unit file has finished (no CPU-bound unit test competes with the senders),
          // in the same pool of workers: two files at a time. They wait on packets and timeouts
          // most of the time, and nothing they touch is shared — each namespace is named after its
          // process (kpxt-TAG-PID-N, helpers/netns.ts), conntrack, ipsets, rulesets and sysctls are
          // per namespace, and the legacy tools' machine-wide lock is waited for (--wait).
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
