/**
 * `kpx summarize -o json`: one node's analysis as a compact, versioned JSON document (Services,
 * endpoints, findings, evidence references), for fleets (see docs/cluster.md, "Fleets").
 */
import { nodeSummary, type EvidenceRefs, type SummaryFinding } from '../cluster/summary.js';
import { proxyModes } from '../kube/modes.js';
import { resolveJudged } from '../judge/index.js';
import { ExitCode } from '../judge/inputs.js';
import { lintSnapshot } from '../lint/run.js';
import type { Finding } from '../lint/rule.js';
import { VERSION } from '../version.js';
import { loadAnswerable } from './answerable.js';
import type { AppIO, Outcome } from './io.js';

export interface SummarizeQuery {
  readonly inputs: readonly string[];
  /** The node's name in the summary (default: the bundle's manifest host, else its folder name). */
  readonly nodeName?: string;
  /** Leave the linter out (findings: []). */
  readonly lint?: boolean;
}

function findingRef(f: Finding, ref: EvidenceRefs): SummaryFinding {
  const evidence = [...(f.line > 0 ? [ref(f)] : []), ...(f.related ?? []).map(ref)];
  return { ruleId: f.ruleId, severity: f.severity, message: f.message, ...(f.service !== undefined ? { service: f.service } : {}), fingerprint: f.fingerprint, evidence };
}

export async function summarize(q: SummarizeQuery, io: AppIO): Promise<Outcome> {
  // A summary of nothing would read as "no Services" on the comparing side: say so here instead.
  const loaded = await loadAnswerable(q.inputs, io, 'which Services this node implements');
  if ('outcome' in loaded) return loaded.outcome;
  const { snapshot } = loaded;
  const resolution = await resolveJudged(snapshot);
  const linted = q.lint === false ? [] : (await lintSnapshot(snapshot, {})).findings;
  const findings = (ref: EvidenceRefs) => linted.map((f) => findingRef(f, ref));
  const summary = nodeSummary({ node: q.nodeName ?? snapshot.name, kpxVersion: VERSION, snapshot, resolution, modes: proxyModes(snapshot), findings });
  return { result: { kind: 'summary', summary }, exit: ExitCode.Ok };
}
