/**
 * Can the browser-backed test (test/browser: the HTML report opened in headless Chromium) run
 * here, and must it?
 *
 * It needs a Chromium: KPX_CHROMIUM when set (.ci/run sets it to Debian's /usr/bin/chromium), else
 * `chromium`, `chromium-browser` or `google-chrome` on PATH; playwright-core (a devDependency)
 * drives it and never downloads a browser. On a machine with only Node `npm test` skips the file
 * and the end of the run says so (kernel-reporter.ts prints both banners); in CI (CI=true) and in
 * `npm run test:browser` (KPX_REQUIRE_BROWSER=1) a missing browser is a failure, never a skip.
 *
 * Pure over a probe, so the selection itself is tested with fake machines (browser-env.test.ts).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export const BROWSER_NAMES = ['chromium', 'chromium-browser', 'google-chrome'] as const;

export interface BrowserProbe {
  /** Is `path` an executable file? */
  executable(path: string): boolean;
  /** The path of `tool` on PATH, or undefined. */
  which(tool: string): string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export type BrowserDecision = { readonly action: 'run'; readonly executable: string } | { readonly action: 'skip'; readonly reason: string } | { readonly action: 'fail'; readonly reason: string };

/** CI=true (as .ci/run is run) or KPX_REQUIRE_BROWSER=1 (`npm run test:browser`): the test must run. */
export function browserRequired(env: BrowserProbe['env']): boolean {
  const ci = env.CI;
  return env.KPX_REQUIRE_BROWSER === '1' || (ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false');
}

export function browserDecision(probe: BrowserProbe): BrowserDecision {
  const set = probe.env.KPX_CHROMIUM;
  let found: string | undefined;
  let reason: string;
  if (set) {
    found = probe.executable(set) ? set : undefined;
    reason = `KPX_CHROMIUM=${set} is not an executable file`;
  } else {
    for (const name of BROWSER_NAMES) found ??= probe.which(name);
    reason = `no Chromium on PATH (looked for ${BROWSER_NAMES.join(', ')}) and KPX_CHROMIUM is not set`;
  }
  if (found !== undefined) return { action: 'run', executable: found };
  return browserRequired(probe.env) ? { action: 'fail', reason } : { action: 'skip', reason };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function thisBrowserMachine(): BrowserProbe {
  return {
    executable: isExecutable,
    which: (tool) => (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((d) => join(d, tool)).find(isExecutable),
    env: process.env,
  };
}

export const BROWSER_HOW_TO_RUN = "to run it: install a Chromium (Debian/Ubuntu: apt-get install chromium) or set KPX_CHROMIUM to a Chromium/Chrome executable, then `npm run test:browser`";

/** The closing banner of a run that left the browser test out. */
export function browserBanner(reason: string, suites: readonly { file: string; notRun: number }[]): string {
  const bar = '!'.repeat(78);
  const n = suites.reduce((k, s) => k + s.notRun, 0);
  return [
    '',
    bar,
    `!! BROWSER-BACKED TESTS DID NOT RUN: ${reason}`,
    `!! ${n} test${n === 1 ? '' : 's'} left out; nobody looked at the HTML report in a browser:`,
    ...suites.map((s) => `!!   ${s.file} (${s.notRun} not run)`),
    `!! ${BROWSER_HOW_TO_RUN}`,
    bar,
    '',
  ].join('\n');
}

/**
 * Should this file's browser tests run? The executable when yes; undefined when this machine has
 * no Chromium and nothing requires one (skipped, and said at the end of the run). Where one is
 * required this throws, so the file fails and names what is missing.
 */
export function requireBrowser(): string | undefined {
  const d = browserDecision(thisBrowserMachine());
  if (d.action === 'run') return d.executable;
  if (d.action === 'skip') return undefined;
  throw new Error(`browser-backed tests cannot run: ${d.reason} (they are required here: CI or KPX_REQUIRE_BROWSER=1). ${BROWSER_HOW_TO_RUN}`);
}
