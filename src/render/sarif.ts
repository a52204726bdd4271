/**
 * SARIF 2.1.0 for code scanning (ARCHITECTURE.md §4.11, after knip's reporter): one run, the rule
 * catalogue in tool.driver.rules (ids `kpx/<id>`, help text), one result per finding with a
 * physical location in the dump (artifact uri, startLine, startColumn) and related locations.
 */
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Finding, LintRule, Severity } from '../lint/rule.js';
import { escapeJsonText } from './json.js';

export const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';

const LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', info: 'note' };

/** A dump path as a SARIF artifact URI: relative paths stay relative (repo-relative for code scanning). */
export function artifactUri(file: string): string {
  if (file === '<stdin>') return 'stdin';
  if (isAbsolute(file)) return pathToFileURL(file).href;
  return file
    .split(/[\\/]/)
    .map((seg) => encodeURIComponent(seg))
    .join('/');
}

function location(file: string, line: number, column: number | undefined) {
  return {
    physicalLocation: {
      artifactLocation: { uri: artifactUri(file) },
      ...(line > 0 ? { region: { startLine: line, startColumn: Math.max(1, column ?? 1) } } : {}),
    },
  };
}

export interface SarifOptions {
  readonly version?: string;
}

export function sarifLog(findings: readonly Finding[], rules: readonly LintRule[], opts: SarifOptions = {}): object {
  const index = new Map(rules.map((r, i) => [r.id, i]));
  return {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'kpx',
            ...(opts.version ? { version: opts.version, semanticVersion: opts.version } : {}),
            rules: rules.map((r) => ({
              id: `kpx/${r.id}`,
              name: r.id.replace(/(^|-)([a-z0-9])/g, (_m, _d, ch: string) => ch.toUpperCase()),
              shortDescription: { text: r.meta.description },
              fullDescription: { text: r.meta.description },
              help: { text: r.meta.docs, markdown: r.meta.docs },
              defaultConfiguration: { level: LEVEL[r.meta.severity] },
              properties: { tags: ['kubernetes', 'kube-proxy'] },
            })),
          },
        },
        results: findings.map((f) => ({
          ruleId: `kpx/${f.ruleId}`,
          ...(index.has(f.ruleId) ? { ruleIndex: index.get(f.ruleId)! } : {}),
          level: LEVEL[f.severity],
          message: { text: f.service ? `${f.message} (Service ${f.service})` : f.message },
          locations: [location(f.file, f.line, f.column)],
          ...(f.related && f.related.length
            ? { relatedLocations: f.related.map((x, i) => ({ id: i + 1, ...location(x.file, x.line, x.column), message: { text: x.text } })) }
            : {}),
          // v2: rule, Service and the flagged line's text (v1 hashed the file path, which moves with the bundle).
          partialFingerprints: { 'kpx/v2': f.fingerprint },
        })),
        columnKind: 'unicodeCodePoints',
      },
    ],
  };
}

export function renderSarif(findings: readonly Finding[], rules: readonly LintRule[], opts: SarifOptions = {}): string {
  // Messages quote dump text: DEL, C1 controls and U+2028/2029 pass JSON.stringify raw.
  return escapeJsonText(JSON.stringify(sarifLog(findings, rules, opts), null, 2)) + '\n';
}
