/**
 * The rule catalogue, generated from the rule modules into README.md (between the
 * `<!-- lint-rules:start -->` and `<!-- lint-rules:end -->` markers).
 *   node dist/src/lint/catalogue.js   (after a build), or
 *   KPX_UPDATE_CATALOGUE=1 npx vitest run test/lint/catalogue.test.ts
 * rewrite it; test/lint/catalogue.test.ts fails when the committed README is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import type { LintRule } from './rule.js';
import { RULES } from './index.js';

const table = (rules: readonly LintRule[]) => [
  '| rule | severity | finds |',
  '| --- | --- | --- |',
  ...rules.map((r) => `| [\`${r.id}\`](#${r.id}) | ${r.meta.severity} | ${r.meta.description.replace(/\|/g, '\\|')} |`),
  '',
];

export function renderCatalogue(rules: readonly LintRule[] = RULES): string {
  const lint = rules.filter((r) => (r.meta.category ?? 'lint') === 'lint');
  const migration = rules.filter((r) => r.meta.category === 'migration');
  const out: string[] = [
    '<!-- Generated from src/lint/rules/*.ts by src/lint/catalogue.ts. Do not edit by hand. -->',
    '',
    'Severities are the defaults; change them per rule with `--config` (`rules: {ID: off|error|warning|info}`),',
    'run a subset with `--rule ID`, skip rules with `--disable ID`. SARIF rule ids are `kpx/ID`.',
    '',
    ...table(lint),
  ];
  if (migration.length) {
    out.push('`kpx migrate-check --to nftables` runs these, with the same options and outputs:', '', ...table(migration));
  }
  for (const r of [...lint, ...migration]) {
    out.push(`### ${r.id}`, '', `**Severity:** ${r.meta.severity}. ${r.meta.description}`, '', r.meta.docs, '');
  }
  return out.join('\n');
}

/** README.md of the repository this module lives in (src/lint → ../..; dist/src/lint → ../../..). */
export function cataloguePath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const up = here.includes(`${join('dist', 'src')}`) ? join(here, '..', '..', '..') : join(here, '..', '..');
  return join(up, 'README.md');
}

const START = '<!-- lint-rules:start -->';
const END = '<!-- lint-rules:end -->';

/** The README with its catalogue section replaced by `catalogue`. */
export function withCatalogue(readme: string, catalogue = renderCatalogue()): string {
  const a = readme.indexOf(START);
  const b = readme.indexOf(END);
  if (a < 0 || b < a) throw new Error(`README.md has no ${START} … ${END} section`);
  return `${readme.slice(0, a + START.length)}\n${catalogue}${readme.slice(b)}`;
}

/** Run as a script (`node dist/src/lint/catalogue.js`). */
const invoked = process.argv.slice(1, 2).some((a) => /(^|[\\/])src[\\/]lint[\\/]catalogue\.[jt]s$/.test(a));
if (invoked) {
  writeFileSync(cataloguePath(), withCatalogue(readFileSync(cataloguePath(), 'utf8')));
  process.stdout.write(`wrote ${cataloguePath()}\n`);
}
