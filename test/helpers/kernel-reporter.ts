/**
 * A vitest reporter that closes a run which left the kernel-backed suites out with a banner:
 * which files did not run, why (not root, which tools are missing), and how to run them.
 * Silent when the suites ran (or when none were selected). It says the same of the browser-backed
 * test (test/browser, browser-env.ts): `.ci/run` and the configs name this one reporter for both.
 *
 * The banner must be the last thing printed, not buried among the test lines: vitest 3's default
 * reporter writes its summary in `onFinished`, after every reporter's `onTestRunEnd`, so the
 * banner is made in `onTestRunEnd` and written in `onFinished` (this reporter is configured after
 * the default one, and reporters are called in order).
 */
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { kernelBanner, kernelDecision, thisMachine } from './kernel-env.js';
import { browserBanner, browserDecision, thisBrowserMachine } from './browser-env.js';

export default class KernelReporter implements Reporter {
  private banner: string | undefined;

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const skipped = (dir: RegExp) =>
      modules
        .filter((m) => dir.test(m.moduleId))
        .map((m) => ({ file: relative(process.cwd(), m.moduleId), notRun: [...m.children.allTests('skipped')].length }))
        .filter((s) => s.notRun > 0);
    const banners: string[] = [];
    const d = kernelDecision(thisMachine());
    const kernel = d.action === 'skip' ? skipped(/[\\/]test[\\/]kernel[\\/]/) : [];
    if (d.action === 'skip' && kernel.length) banners.push(kernelBanner(d.reason, kernel));
    const b = browserDecision(thisBrowserMachine());
    const browser = b.action === 'skip' ? skipped(/[\\/]test[\\/]browser[\\/]/) : [];
    if (b.action === 'skip' && browser.length) banners.push(browserBanner(b.reason, browser));
    this.banner = banners.length ? banners.join('') : undefined;
  }

  onFinished(): void {
    if (this.banner) process.stdout.write(this.banner + '\n');
  }
}
