/**
 * `kpx summarize -o json`: one node's analysis as a compact, versioned JSON document (Services,
 * endpoints, findings, evidence references), for fleets: run it on every node and compare the
 * summaries in one place with `kpx services --nodes` (see docs/cluster.md, "Fleets").
 */
import { nodeSummary, type EvidenceRefs, type SummaryFinding } from '../../cluster/summary.js';
import { proxyModes } from '../../kube/modes.js';
import { resolveJudged } from '../../judge/index.js';
import { lintSnapshot } from '../../lint/run.js';
import type { Finding } from '../../lint/rule.js';
import { ExitCode } from '../exit.js';
import { cannotTell, logAccountLines, reportInputProblems } from '../evidence.js';
import { loadFromOptions, type InputOptions } from '../inputs.js';
import { VERSION } from '../../version.js';

export interface SummarizeOptions extends InputOptions {
  output: 'json';
  /** The node's name in the summary (default: the bundle's manifest host, else its folder name). */
  nodeName?: string;
  /** Leave the linter out (findings: []). */
  lint?: boolean;
}

function findingRef(f: Finding, ref: EvidenceRefs): SummaryFinding {
  const evidence = [...(f.line > 0 ? [ref(f)] : []), ...(f.related ?? []).map(ref)];
  return { ruleId: f.ruleId, severity: f.severity, message: f.message, ...(f.service !== undefined ? { service: f.service } : {}), fingerprint: f.fingerprint, evidence };
}

export async function summarizeAction(positional: string[], opts: SummarizeOptions): Promise<number> {
  const snapshot = await loadFromOptions(positional, opts, false);
  reportInputProblems(snapshot);
  // A summary of nothing would read as "no Services" on the comparing side: say so here instead.
  const unknown = cannotTell(snapshot, 'which Services this node implements');
  if (unknown) {
    process.stderr.write(unknown + '\n');
    for (const l of logAccountLines(snapshot)) process.stderr.write(l + '\n');
    return ExitCode.CannotTell;
  }
  const resolution = await resolveJudged(snapshot);
  const linted = opts.lint === false ? [] : (await lintSnapshot(snapshot, {})).findings;
  const findings = (ref: EvidenceRefs) => linted.map((f) => findingRef(f, ref));
  const summary = nodeSummary({ node: opts.nodeName ?? snapshot.name, kpxVersion: VERSION, snapshot, resolution, modes: proxyModes(snapshot), findings });
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  return ExitCode.Ok;
}
