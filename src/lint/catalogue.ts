/**
 * The rule catalogue, generated from the rule modules into docs/rules/: an index (README.md, the
 * table of every rule) and one page per rule (`<id>.md`), as typescript-eslint and eslint keep
 * theirs. Rewrite them with
 *   node dist/src/lint/catalogue.js   (after a build), or
 *   KPX_UPDATE_CATALOGUE=1 npx vitest run test/lint/catalogue.test.ts
 * test/lint/catalogue.test.ts fails when a committed page is out of date, when a rule has no page,
 * or when a page has no rule.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import type { LintRule } from './rule.js';
import { RULES } from './index.js';

const GENERATED = '<!-- Generated from src/lint/rules/*.ts by src/lint/catalogue.ts. Do not edit by hand. -->';

const ruleTable = (rules: readonly LintRule[]) => [
  '| rule | severity | finds |',
  '| --- | --- | --- |',
  ...rules.map((r) => `| [\`${r.id}\`](${r.id}.md) | ${r.meta.severity} | ${r.meta.description.replace(/\|/g, '\\|')} |`),
  '',
];

/** The index page: every rule with its severity and what it finds, linking to its page; `kpx lint`'s rules, then `kpx migrate-check`'s. */
export function renderCatalogueIndex(rules: readonly LintRule[] = RULES): string {
  const lint = rules.filter((r) => (r.meta.category ?? 'lint') === 'lint');
  const migration = rules.filter((r) => r.meta.category === 'migration');
  return [
    GENERATED,
    '',
    '# Lint rule catalogue',
    '',
    'Severities are the defaults; change them per rule with `--config` (`rules: {ID: off|error|warning|info}`),',
    'run a subset with `--rule ID`, skip rules with `--disable ID`. SARIF rule ids are `kpx/ID`.',
    '`kpx lint --list-rules --rule ID` prints a rule\'s page in the terminal.',
    '',
    ...ruleTable(lint),
    ...(migration.length
      ? ['## Migration checks', '', '`kpx migrate-check --to nftables` runs these (and only these), with the same options and outputs', '([the command](../commands/migrate-check.md)); `kpx migrate-check --list-rules --rule ID` prints one.', '', ...ruleTable(migration)]
      : []),
  ].join('\n');
}

/** One rule's page: severity, what it finds, and its docs (why it matters, the fix, an example). */
export function renderRulePage(r: LintRule): string {
  const needs = r.meta.requires?.length ? `\n**Needs:** ${r.meta.requires.map((x) => `\`${x}\``).join(', ')} (without it the rule is reported as not checked).\n` : '';
  const alone = r.meta.standalone ? '\n**Runs without a ruleset:** it judges these inputs on their own, so `kpx lint` runs it even when no iptables-save, nft or ipvsadm dump is given (then only such rules run, and the Service rules stay unchecked: exit 3 when nothing reaches `--fail-on`).\n' : '';
  return [GENERATED, '', `# ${r.id}`, '', `**Severity:** ${r.meta.severity}. ${r.meta.description}`, needs + alone, r.meta.docs, '', '[All rules](README.md)', ''].join('\n');
}

/** Every generated file of docs/rules/, by file name. */
export function renderCatalogue(rules: readonly LintRule[] = RULES): Map<string, string> {
  const files = new Map<string, string>([['README.md', renderCatalogueIndex(rules)]]);
  for (const r of rules) files.set(`${r.id}.md`, renderRulePage(r));
  return files;
}

/** docs/rules/ of the repository this module lives in (src/lint → ../..; dist/src/lint → ../../..). */
export function catalogueDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const up = here.includes(`${join('dist', 'src')}`) ? join(here, '..', '..', '..') : join(here, '..', '..');
  return join(up, 'docs', 'rules');
}

/** The files docs/rules/ holds now, by name (markdown only). */
export function readCatalogue(dir = catalogueDir()): Map<string, string> {
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith('.md'));
  } catch {
    return new Map();
  }
  return new Map(names.sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

/** How docs/rules/ (`have`) differs from what the rules generate (`want`): pages missing, pages without a rule, stale pages. */
export function compareCatalogue(have: ReadonlyMap<string, string>, want: ReadonlyMap<string, string> = renderCatalogue()) {
  return {
    missing: [...want.keys()].filter((f) => !have.has(f)),
    extra: [...have.keys()].filter((f) => !want.has(f)),
    stale: [...want.keys()].filter((f) => have.has(f) && have.get(f) !== want.get(f)),
  };
}

/** Write docs/rules/ anew: every generated page, and no page without a rule. */
export function writeCatalogue(dir = catalogueDir(), files = renderCatalogue()): void {
  mkdirSync(dir, { recursive: true });
  for (const f of readCatalogue(dir).keys()) if (!files.has(f)) rmSync(join(dir, f));
  for (const [f, text] of files) writeFileSync(join(dir, f), text);
}

/** Run as a script (`node dist/src/lint/catalogue.js`). */
const invoked = process.argv.slice(1, 2).some((a) => /(^|[\\/])src[\\/]lint[\\/]catalogue\.[jt]s$/.test(a));
if (invoked) {
  writeCatalogue();
  process.stdout.write(`wrote ${catalogueDir()}\n`);
}
