/**
 * A vitest reporter that closes a run which left the kernel-backed suites out with a banner:
 * which files did not run, why (not root, which tools are missing), and how to run them.
 * Silent when the suites ran (or when none were selected).
 *
 * The banner must be the last thing printed, not buried among the test lines: vitest 3's default
 * reporter writes its summary in `onFinished`, after every reporter's `onTestRunEnd`, so the
 * banner is made in `onTestRunEnd` and written in `onFinished` (this reporter is configured after
 * the default one, and reporters are called in order).
 */
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { kernelBanner, kernelDecision, thisMachine } from './kernel-env.js';

export default class KernelReporter implements Reporter {
  private banner: string | undefined;

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    this.banner = undefined;
    const d = kernelDecision(thisMachine());
    if (d.action !== 'skip') return;
    const suites = modules
      .filter((m) => /[\\/]test[\\/]kernel[\\/]/.test(m.moduleId))
      .map((m) => ({ file: relative(process.cwd(), m.moduleId), notRun: [...m.children.allTests('skipped')].length }))
      .filter((s) => s.notRun > 0);
    if (suites.length) this.banner = kernelBanner(d.reason, suites);
  }

  onFinished(): void {
    if (this.banner) process.stdout.write(this.banner + '\n');
  }
}
