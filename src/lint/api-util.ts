/**
 * Shared by the `api-*` rules: the drift between the API's intent and this node's dataplane
 * (src/kube/drift.ts), computed once per lint run, and the finding each drift item becomes —
 * at the dump line when the node has something (a stale endpoint, an extra address), else at the
 * API object; the other one as related evidence.
 */
import { computeDrift, type Drift, type DriftKind, type DriftResult } from '../kube/drift.js';
import type { LintContext } from './context.js';
import type { Related, Report, RuleContext, RuleMeta } from './rule.js';

const cache = new WeakMap<object, DriftResult | null>();

export function driftOf(ctx: LintContext): DriftResult | undefined {
  let r = cache.get(ctx.resolution);
  if (r === undefined) {
    r = computeDrift(ctx.snapshot, ctx.resolution) ?? null;
    cache.set(ctx.resolution, r);
  }
  return r ?? undefined;
}

export function driftItems(ctx: LintContext, kinds: readonly DriftKind[]): Drift[] {
  return (driftOf(ctx)?.drift ?? []).filter((d) => kinds.includes(d.kind));
}

/** The Report for a drift item: located at the dump line (`atDump`) or at the API object. */
export function driftReport(d: Drift, messageId: string, data: Record<string, string | number>, atDump: boolean, severity?: Report['severity']): Report {
  const api: Related | undefined = d.api ? { file: d.api.file, line: d.api.line, column: d.api.column, text: d.api.text } : undefined;
  const dump: Related | undefined = d.dump ? { file: d.dump.file, line: d.dump.line, text: d.dump.text } : undefined;
  const here = (atDump ? dump : api) ?? api ?? dump;
  const other = here === api ? dump : api;
  return {
    messageId,
    data: { service: d.service, address: d.address, ...data },
    file: here?.file ?? '',
    line: here?.line ?? 0,
    column: here?.column ?? 1,
    ...(here?.text !== undefined ? { text: here.text } : {}),
    service: d.service,
    related: other ? [other] : [],
    ...(severity ? { severity } : {}),
  };
}

/** Every api- rule needs the API's objects, and says nothing of a node given without them. */
export const API_RULE: Pick<RuleMeta, 'requires' | 'relevant'> = { requires: ['k8s-api'], relevant: () => false };

export type { RuleContext };
