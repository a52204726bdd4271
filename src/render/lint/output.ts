/** `kpx lint` and `kpx migrate-check`: their results, and the renderers of -o text|json|sarif|github. */
import type { LintRule } from '../../lint/rule.js';
import type { Finding } from '../../lint/rule.js';
import { renderLintGithub, renderLintJson, renderLintText, renderRuleDocs, renderRuleList, type LintReport } from '../lint.js';
import { renderSarif } from '../sarif.js';
import { renderJson } from '../json.js';
import { versioned } from '../schemas/index.js';
import { jsonText, type RenderContext, type Rendered } from '../output.js';

export interface LintOutcomeResult {
  readonly kind: 'lint';
  readonly report: LintReport & { readonly findings: readonly Finding[]; readonly rules: readonly LintRule[] };
  /** The rules that ran (SARIF lists them). */
  readonly ran: readonly LintRule[];
  /** Text only: the answer's first line (migrate-check). */
  readonly heading?: string;
  readonly version: string;
}

/** `--list-rules`: the catalogue, or (with --rule) each chosen rule's whole documentation. */
export interface LintRulesResult {
  readonly kind: 'lint-rules';
  readonly rules: readonly LintRule[];
  readonly docs: boolean;
}

export const lintText = (r: LintOutcomeResult, ctx: RenderContext): Rendered => ({ via: 'text', text: `${r.heading ? `${ctx.c.bold(r.heading)}\n\n` : ''}${renderLintText(r.report, ctx.c)}` });
export const lintJson = (r: LintOutcomeResult): Rendered => jsonText(renderLintJson(r.report));
export const lintSarif = (r: LintOutcomeResult): Rendered => jsonText(renderSarif(r.report.findings, r.ran, { version: r.version }));
export const lintGithub = (r: LintOutcomeResult): Rendered => ({ via: 'plain', text: renderLintGithub(r.report) });

export const rulesText = (r: LintRulesResult, ctx: RenderContext): Rendered => ({ via: 'text', text: r.docs ? renderRuleDocs(r.rules, ctx.c) : renderRuleList(r.rules, ctx.c) });
export const rulesJson = (r: LintRulesResult): Rendered =>
  jsonText(renderJson(versioned('lint-rules', { rules: r.rules.map((x) => ({ id: x.id, severity: x.meta.severity, description: x.meta.description, docs: x.meta.docs })) })));
