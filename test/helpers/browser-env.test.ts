/**
 * Where the browser-backed test runs: a machine with a Chromium runs it, one with only Node skips it
 * and says so at the end of the run, CI and `npm run test:browser` fail without one.
 */
import { describe, expect, it } from 'vitest';
import { browserBanner, browserDecision, type BrowserProbe } from './browser-env.js';

const machine = (onPath: Record<string, string>, files: readonly string[], env: Record<string, string> = {}): BrowserProbe => ({
  executable: (p) => files.includes(p),
  which: (t) => onPath[t],
  env,
});

describe('browser test selection', () => {
  it('runs with KPX_CHROMIUM when it is an executable, else with a chromium on PATH', () => {
    expect(browserDecision(machine({}, ['/usr/bin/chromium'], { KPX_CHROMIUM: '/usr/bin/chromium', CI: 'true' }))).toEqual({ action: 'run', executable: '/usr/bin/chromium' });
    expect(browserDecision(machine({ 'chromium-browser': '/snap/bin/chromium-browser' }, []))).toEqual({ action: 'run', executable: '/snap/bin/chromium-browser' });
    expect(browserDecision(machine({ chromium: '/a/chromium', 'google-chrome': '/b/google-chrome' }, []))).toEqual({ action: 'run', executable: '/a/chromium' });
  });

  it('skips on a machine with only Node, naming why', () => {
    expect(browserDecision(machine({}, []))).toEqual({ action: 'skip', reason: 'no Chromium on PATH (looked for chromium, chromium-browser, google-chrome) and KPX_CHROMIUM is not set' });
    expect(browserDecision(machine({}, [], { CI: 'false' })).action).toBe('skip');
  });

  it('fails in CI and under KPX_REQUIRE_BROWSER=1, and when KPX_CHROMIUM names no executable (even with one on PATH)', () => {
    expect(browserDecision(machine({}, [], { CI: 'true' }))).toEqual({ action: 'fail', reason: 'no Chromium on PATH (looked for chromium, chromium-browser, google-chrome) and KPX_CHROMIUM is not set' });
    expect(browserDecision(machine({}, [], { KPX_REQUIRE_BROWSER: '1' })).action).toBe('fail');
    expect(browserDecision(machine({ chromium: '/usr/bin/chromium' }, [], { KPX_CHROMIUM: '/nope', CI: '1' }))).toEqual({ action: 'fail', reason: 'KPX_CHROMIUM=/nope is not an executable file' });
  });

  it('the closing banner names the file, how many tests did not run, and how to run them', () => {
    const b = browserBanner('no Chromium on PATH', [{ file: 'test/browser/report.test.ts', notRun: 6 }]);
    expect(b).toContain('!! BROWSER-BACKED TESTS DID NOT RUN: no Chromium on PATH');
    expect(b).toContain('!!   test/browser/report.test.ts (6 not run)');
    expect(b).toContain('npm run test:browser');
  });
});
