/**
 * `kpx lint` renderers: text (grouped by severity, then Service, with the dump lines), JSON
 * (the stable `{findings, summary}` schema), GitHub workflow annotations, and the rule catalogue.
 * Pure functions of the result (SARIF is in sarif.ts).
 */
import type { Colors } from './colors.js';
import { renderJson } from './json.js';
import { SCHEMA_VERSION } from './schemas/index.js';
import type { Finding, LintRule, Severity } from '../lint/rule.js';
import { fixOf, REQUIRED_INPUT_LABEL, SEVERITIES } from '../lint/rule.js';
import type { LintSummary, SkippedRule } from '../lint/run.js';
import { printable, maxOf, appendAll } from '../source/index.js';
import { terminalText } from './colors.js';

export interface LintReport {
  readonly findings: readonly Finding[];
  readonly summary: LintSummary;
  /** Rules not run for lack of an input they need. */
  readonly skipped?: readonly SkippedRule[];
  /** The rule definitions (for each fired rule's fix in text output). */
  readonly rules?: readonly LintRule[];
}

/** `endpoint-unroutable (needs `ip route`)`, one per skipped rule. */
export const skippedText = (s: readonly SkippedRule[]) => s.map((x) => `${x.ruleId} (needs ${x.missing.map((m) => REQUIRED_INPUT_LABEL[m]).join(' and ')})`).join(', ');

const NODE_WIDE = '(not tied to one Service)';

/** The JSON form (`kpx lint -o json`): stable key order, findings sorted by file, line, column, rule. */
export function lintJson(r: LintReport): { schemaVersion: number; findings: Finding[]; summary: LintSummary; skipped: SkippedRule[] } {
  return {
    schemaVersion: SCHEMA_VERSION.lint,
    findings: r.findings.map((f) => ({
      ruleId: f.ruleId,
      severity: f.severity,
      message: f.message,
      file: f.file,
      line: f.line,
      column: f.column,
      ...(f.text !== undefined ? { text: f.text } : {}),
      ...(f.service !== undefined ? { service: f.service } : {}),
      ...(f.related ? { related: f.related.map((x) => ({ file: x.file, line: x.line, ...(x.column !== undefined ? { column: x.column } : {}), text: x.text })) } : {}),
      fingerprint: f.fingerprint,
    })),
    summary: { error: r.summary.error, warning: r.summary.warning, info: r.summary.info },
    skipped: (r.skipped ?? []).map((s) => ({ ruleId: s.ruleId, missing: [...s.missing] })),
  };
}

export function renderLintJson(r: LintReport): string {
  return renderJson(lintJson(r));
}

const loc = (file: string, line: number, column?: number) => (line > 0 ? `${file}:${line}${column ? `:${column}` : ''}` : file);

export function renderLintText(r: LintReport, c: Colors): string {
  const out: string[] = [];
  const paint: Record<Severity, (s: string) => string> = { error: (s) => c.red.bold(s), warning: (s) => c.yellow.bold(s), info: (s) => c.cyan(s) };
  for (const sev of SEVERITIES) {
    const list = r.findings.filter((f) => f.severity === sev);
    if (list.length === 0) continue;
    out.push(paint[sev](`${sev.toUpperCase()}S (${list.length})`));
    const groups = new Map<string, Finding[]>();
    for (const f of list) {
      const k = f.service ?? NODE_WIDE;
      const g = groups.get(k);
      if (g) g.push(f);
      else groups.set(k, [f]);
    }
    const keys = [...groups.keys()].sort((a, b) => (a === NODE_WIDE ? 1 : b === NODE_WIDE ? -1 : a < b ? -1 : a > b ? 1 : 0));
    for (const k of keys) {
      out.push(`  ${c.bold(printable(k, 253))}`);
      for (const f of groups.get(k)!) {
        out.push(`    ${paint[sev](sev)} ${printable(f.message, 400)} ${c.dim(`[${f.ruleId}]`)}`);
        out.push(`      ${c.dim(loc(f.file, f.line, f.column))}${f.text !== undefined ? `  ${printable(f.text, 200)}` : ''}`);
        for (const x of f.related ?? []) out.push(`      ${c.dim(loc(x.file, x.line, x.column))}  ${c.dim(printable(x.text, 200))}`);
      }
    }
    out.push('');
  }
  const fired = [...new Set(r.findings.map((f) => f.ruleId))].sort();
  const fixes = fired.flatMap((id) => {
    const rule = r.rules?.find((x) => x.id === id);
    const fix = rule && fixOf(rule);
    return fix ? [`  ${c.dim(`[${id}]`)} ${printable(fix, 600)}`] : [];
  });
  if (fixes.length) {
    out.push(c.bold('HOW TO FIX'));
    appendAll(out, fixes);
    out.push('');
  }
  const s = r.summary;
  const total = s.error + s.warning + s.info;
  const skipped = r.skipped ?? [];
  const counts = `${s.error} error${s.error === 1 ? '' : 's'}, ${s.warning} warning${s.warning === 1 ? '' : 's'}, ${s.info} info`;
  out.push(total === 0 ? (skipped.length ? c.yellow('no findings among the rules that could run') : c.green('no findings')) : counts);
  if (skipped.length) out.push(c.yellow(`not checked, for lack of input: ${skippedText(skipped)}`));
  return terminalText(out.join('\n') + '\n', c);
}

/** GitHub Actions workflow commands: `::error file=…,line=…,col=…,title=…::message`. */
export function renderLintGithub(r: LintReport): string {
  const data = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
  const prop = (s: string) => data(printable(s, 1000)).replace(/:/g, '%3A').replace(/,/g, '%2C');
  const cmd: Record<Severity, string> = { error: 'error', warning: 'warning', info: 'notice' };
  const lines = r.findings.map((f) => {
    const props = [`file=${prop(f.file)}`, ...(f.line > 0 ? [`line=${f.line}`, `col=${f.column}`] : []), `title=${prop(`kpx/${f.ruleId}${f.service ? ` ${f.service}` : ''}`)}`];
    return `::${cmd[f.severity]} ${props.join(',')}::${data(printable(f.message, 1000))}`;
  });
  return lines.length ? lines.join('\n') + '\n' : '';
}

/** `kpx lint --list-rules`. */
export function renderRuleList(rules: readonly LintRule[], c: Colors): string {
  const w = maxOf(rules.map((r) => r.id.length), 0);
  return rules.map((r) => `${r.id.padEnd(w)}  ${c.dim(r.meta.severity.padEnd(7))}  ${r.meta.description}`).join('\n') + '\n';
}

/** `kpx lint --list-rules --rule ID`: each rule's id, severity, description and its docs (markdown, as in docs/rules/ID.md). */
export function renderRuleDocs(rules: readonly LintRule[], c: Colors): string {
  return rules.map((r) => `${c.bold(r.id)}  ${c.dim(r.meta.severity)}\n${r.meta.description}\n\n${r.meta.docs}\n`).join('\n');
}
