/**
 * Run the lint rules over a snapshot: build the context once, run each selected rule, apply
 * configured severities, sort, and filter against a baseline.
 */
import type { NodeSnapshot } from '../model/snapshot.js';
import type { Resolution } from '../kube/types.js';
import { resolveServices } from '../kube/resolve.js';
import { judgeNode } from '../judge/index.js';
import { buildContext, type LintContext } from './context.js';
import { formatMessage, severityRank, type Finding, type LintRule, type Report, type RequiredInput, type RuleContext, type Severity } from './rule.js';
import { findingFingerprint, type FingerprintFields } from './fingerprint.js';
import { LINT_RULES } from './index.js';

export type SeveritySetting = Severity | 'off';

export interface LintOptions {
  /** Run only these rule ids (empty/undefined = all). */
  readonly only?: readonly string[];
  readonly disable?: readonly string[];
  /** Per-rule severity; 'off' disables the rule. */
  readonly severities?: Readonly<Record<string, SeveritySetting>>;
  /** Use this resolution instead of resolving again (callers that already have one); it is judged (src/judge) once. */
  readonly resolution?: Resolution;
  /** The rule set (default: the lint rules; `kpx migrate-check` passes the migration rules). */
  readonly rules?: readonly LintRule[];
}

export interface LintSummary {
  readonly error: number;
  readonly warning: number;
  readonly info: number;
}

/** A rule that concerns this node but was not run, for lack of an input it needs. */
export interface SkippedRule {
  readonly ruleId: string;
  readonly missing: readonly RequiredInput[];
}

export interface LintResult {
  readonly findings: readonly Finding[];
  readonly summary: LintSummary;
  /** Ids of the rules that ran. */
  readonly rules: readonly string[];
  /** Rules not run because an input they need is not among the dumps (an unknown, not a clean bill). */
  readonly skipped: readonly SkippedRule[];
  /** Milliseconds per rule, plus `context` (resolution and indexes). */
  readonly timings: Readonly<Record<string, number>>;
}

/** Which rules run, given --rule/--disable and the config's severities. */
export function selectRules(opts: LintOptions): LintRule[] {
  const all = opts.rules ?? LINT_RULES;
  const only = opts.only && opts.only.length ? new Set(opts.only) : undefined;
  const disabled = new Set(opts.disable ?? []);
  return all.filter((r) => (!only || only.has(r.id)) && !disabled.has(r.id) && opts.severities?.[r.id] !== 'off');
}

export function compareFindings(a: Finding, b: Finding): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  if (a.line !== b.line) return a.line - b.line;
  if (a.column !== b.column) return a.column - b.column;
  if (a.ruleId !== b.ruleId) return a.ruleId < b.ruleId ? -1 : 1;
  return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
}

export function summarize(findings: readonly Finding[]): LintSummary {
  const s = { error: 0, warning: 0, info: 0 };
  for (const f of findings) s[f.severity]++;
  return s;
}

/** Which of a rule's required inputs this snapshot lacks. */
export function missingInputs(ctx: LintContext, rule: LintRule): RequiredInput[] {
  const s = ctx.snapshot;
  const has: Record<RequiredInput, boolean> = {
    routes: s.routes.length > 0,
    addresses: s.interfaces.length > 0,
    links: s.interfaces.some((i) => i.linkInfo !== undefined),
    sysctl: ctx.sysctlValues.size > 0,
    ipsets: s.ipsets.length > 0,
    ipvs: s.ipvs.length > 0,
    'kube-proxy-log': (s.kubeProxy?.logs.length ?? 0) > 0,
    'kube-proxy-config': (s.kubeProxy?.configs.length ?? 0) > 0,
    'k8s-api': s.api !== undefined,
    conntrack: (s.conntrack?.tables.length ?? 0) > 0,
    'conntrack-stats': (s.conntrack?.stats.length ?? 0) > 0,
    kernel: s.kernel !== undefined,
    iptables: s.rulesets.length > 0,
  };
  return (rule.meta.requires ?? []).filter((r) => !has[r]);
}

/** Run the rules over a context that is already built (benchmarks time the parts separately). */
export function runRules(ctx: LintContext, opts: LintOptions = {}): { findings: Finding[]; timings: Record<string, number>; rules: string[]; skipped: SkippedRule[] } {
  const findings: Finding[] = [];
  const timings: Record<string, number> = {};
  const ran: LintRule[] = [];
  const skipped: SkippedRule[] = [];
  for (const rule of selectRules(opts)) {
    const missing = missingInputs(ctx, rule);
    if (missing.length > 0) {
      if (rule.meta.relevant?.(ctx) ?? true) skipped.push({ ruleId: rule.id, missing });
      continue;
    }
    ran.push(rule);
    const configured = opts.severities?.[rule.id];
    const started = performance.now();
    const rctx: RuleContext = {
      ...ctx,
      report(r: Report) {
        const template = rule.meta.messages[r.messageId];
        if (template === undefined) throw new Error(`lint rule ${rule.id} reported unknown message id ${r.messageId}`);
        const severity: Severity = configured && configured !== 'off' ? configured : (r.severity ?? rule.meta.severity);
        const message = formatMessage(template, r.data);
        const f: Finding = {
          ruleId: rule.id,
          severity,
          message,
          file: r.file,
          line: r.line,
          column: r.column ?? 1,
          ...(r.text !== undefined ? { text: r.text } : {}),
          ...(r.service !== undefined ? { service: r.service } : {}),
          ...(r.related && r.related.length ? { related: r.related } : {}),
          fingerprint: findingFingerprint({ ruleId: rule.id, message, service: r.service, text: r.text }),
        };
        findings.push(f);
      },
    };
    rule.check(rctx);
    timings[rule.id] = performance.now() - started;
  }
  findings.sort(compareFindings);
  return { findings, timings, rules: ran.map((r) => r.id), skipped };
}

export async function lintSnapshot(snapshot: NodeSnapshot, opts: LintOptions = {}): Promise<LintResult> {
  const started = performance.now();
  // Rules read the judged Service ports (src/judge): the state every command prints, never their own.
  const judgement = judgeNode(snapshot, opts.resolution ?? (await resolveServices(snapshot)));
  const ctx = buildContext(snapshot, judgement.resolution, judgement);
  const context = performance.now() - started;
  const { findings, timings, rules, skipped } = runRules(ctx, opts);
  return { findings, summary: summarize(findings), rules, skipped, timings: { context, ...timings } };
}

/** A baseline entry: a finding of a previous `kpx lint -o json` (its fingerprint, or the fields to compute it). */
export type BaselineEntry = FingerprintFields & { readonly fingerprint?: string };

/**
 * Keep only findings not in the baseline, matched by fingerprint (rule, Service, the flagged line's
 * text — not the file's path or line number). Each baseline entry absorbs one finding.
 */
export function applyBaseline(findings: readonly Finding[], baseline: readonly BaselineEntry[]): Finding[] {
  const left = new Map<string, number>();
  for (const b of baseline) {
    const k = b.fingerprint ?? findingFingerprint(b);
    left.set(k, (left.get(k) ?? 0) + 1);
  }
  const out: Finding[] = [];
  for (const f of findings) {
    const k = f.fingerprint;
    const n = left.get(k) ?? 0;
    if (n > 0) left.set(k, n - 1);
    else out.push(f);
  }
  return out;
}

/** Does any finding reach the --fail-on threshold? */
export function failsAt(findings: readonly Finding[], failOn: 'error' | 'warning' | 'never'): boolean {
  if (failOn === 'never') return false;
  const limit = severityRank(failOn);
  return findings.some((f) => severityRank(f.severity) <= limit);
}
