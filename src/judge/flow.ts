/**
 * The judgement of one traced flow: the verdict line. From the trace's outcomes (shares per
 * verdict, never renormalised: the UNKNOWN share stays with its reasons), the conntrack entry that
 * pins the flow (then that is the verdict: where it goes and its fate), the completeness of the
 * dispatch evidence behind "no Service matches" (with the unread lines that name the destination),
 * kube-proxy's sync health and the IPVS draining trap.
 */
import { parseIp } from '../model/addr.js';
import type { Trace, TraceOutcome, UnknownReason, Verdict } from '../trace/types.js';
import { mentionsOf, partialEvidence, tableEvidence } from './evidence.js';
import type { Caveat, Cite, FlowJudgement, NodeJudgement, Pin, Reason } from './types.js';

const round = (p: number) => Math.round(p * 1e10) / 1e10;

/** The cite of an outcome's end: its last step's rule. */
function endCite(o: TraceOutcome): Cite[] {
  const s = o.steps[o.steps.length - 1];
  return s && s.file !== null && s.rule !== null ? [{ file: s.file, line: s.rule, ...(s.text !== undefined ? { text: s.text } : {}) }] : [];
}

/** Why UNKNOWN outcomes are unknown, once per reason (a chain the dump cannot lack says the dump is not whole). */
function unknownReasons(node: NodeJudgement, unknown: readonly TraceOutcome[]): Reason[] {
  const out: Reason[] = [];
  const seen = new Set<string>();
  for (const o of unknown) {
    const u: UnknownReason | undefined = o.unknown;
    // The scenario cap is said once, as its own reason (below).
    if (!u || u.code === 'too-many-scenarios') continue;
    const key = JSON.stringify(u);
    if (seen.has(key)) continue;
    seen.add(key);
    if (u.code === 'chain-missing') {
      const at = o.steps[o.steps.length - 1];
      const t = at?.file ? tableEvidence(node.snapshot, at.file, at.table) : undefined;
      if (t?.kind === 'edited') {
        out.push({ code: 'dump-not-whole', file: t.file, table: t.table, chains: [u.chain], cites: endCite(o) });
        continue;
      }
    }
    out.push({ code: 'walk-unknown', unknown: u, cites: endCite(o) });
  }
  return out;
}

function pinOf(t: Trace): Pin | undefined {
  const a = t.assumptions.find((x) => x.code === 'conntrack-pinned');
  if (!a || a.code !== 'conntrack-pinned' || !a.applied) return undefined;
  const fate: Pin['fate'] = !a.translated ? 'untranslated' : a.current === false ? 'blackholed' : a.current ? 'endpoint' : 'unknown';
  return { to: a.to, fate, ...(a.timeout !== undefined ? { seconds: a.timeout } : {}), cite: { file: a.file, line: a.line } };
}

/** IPVS outcomes through a virtual server with real servers at weight 0: the conn_reuse_mode trap, on their outcome line. */
function drainingCaveats(node: NodeJudgement, t: Trace): { outcome: number; caveat: Caveat }[] {
  const out: { outcome: number; caveat: Caveat }[] = [];
  const dst = parseIp(t.packet.dst);
  t.outcomes.forEach((o, i) => {
    const step = o.steps.find((s) => s.code === 'ipvs-real-server' || s.code === 'ipvs-draining');
    if (!step) return;
    const svc = node.resolution.services.find((s) => s.mode === 'ipvs' && s.protocol === t.packet.protocol && (s.port === t.packet.dport || s.nodePort === t.packet.dport) && dst !== undefined && [s.clusterIP, ...s.externalIPs, ...s.loadBalancerIPs].some((a) => a !== null && parseIp(a)?.value === dst.value));
    const c = svc ? node.judgementOf(svc).caveats.find((x) => x.code === 'draining-real-servers') : undefined;
    if (c) out.push({ outcome: i, caveat: c });
  });
  return out;
}

export function judgeFlow(node: NodeJudgement, t: Trace): FlowJudgement {
  const scenarios = t.scenarios.length ? t.scenarios : [{ conditions: [], outcomes: t.outcomes.map((_, i) => i) }];
  const groups = scenarios.map((s) => s.outcomes.map((i) => t.outcomes[i]));
  const mix = (os: readonly TraceOutcome[]) => {
    const by = new Map<Verdict, number>();
    for (const o of os) by.set(o.verdict, (by.get(o.verdict) ?? 0) + o.probability);
    return [...by].map(([verdict, share]) => ({ verdict, share: round(share) })).sort((a, b) => b.share - a.share);
  };
  const mixes = groups.map(mix);
  const same = mixes.every((m) => JSON.stringify(m) === JSON.stringify(mixes[0]));
  const shares = mixes[0] ?? [];
  const unknownOutcomes = t.outcomes.filter((o) => o.verdict === 'UNKNOWN');
  const reasons = unknownReasons(node, unknownOutcomes);
  const capped = t.assumptions.find((a) => a.code === 'too-many-scenarios');
  if (capped && capped.code === 'too-many-scenarios') reasons.push({ code: 'scenarios-not-followed', limit: capped.limit });
  const unknownShare = same ? (shares.find((s) => s.verdict === 'UNKNOWN')?.share ?? 0) : null;
  const unknown = reasons.length ? { share: unknownShare, reasons } : null;

  const caveats: Caveat[] = [];
  if (node.stale) caveats.push({ code: 'rules-may-be-stale', ...node.stale });
  for (const v of node.secondViews) if (v.differingCount > 0) caveats.push({ code: 'second-view', file: v.file, of: v.of, kind: v.kind, rules: v.rules, differing: v.differingCount, ...(v.differing[0] ? { first: { file: v.file, line: v.differing[0].line, text: v.differing[0].text } } : {}) });

  const pinned = pinOf(t);
  let noService: FlowJudgement['noService'];
  if (t.services.length === 0) {
    const partial = partialEvidence(node.snapshot).filter((e) => e.dialect !== 'ipvs' || node.snapshot.ipvs.length > 0);
    const dst = parseIp(t.packet.dst);
    const mentions = dst ? mentionsOf(node.snapshot, dst, t.packet.dport) : [];
    noService = { evidence: partial.length || mentions.length ? 'partial' : 'complete', mentions, partial };
  }
  const everyUnknown = t.outcomes.length > 0 && t.outcomes.every((o) => o.verdict === 'UNKNOWN');
  const noServiceUnknown = noService?.evidence === 'partial' && !t.outcomes.some((o) => o.verdict === 'DNAT');
  const verdict: FlowJudgement['verdict'] = pinned
    ? 'PINNED'
    : noServiceUnknown
      ? 'UNKNOWN'
      : !same
        ? 'DEPENDS'
        : shares.length === 1
          ? shares[0].verdict
          : shares.length === 0
            ? 'UNKNOWN'
            : 'MIXED';
  return {
    verdict,
    shares,
    unknown,
    ...(pinned ? { pinned } : {}),
    ...(noService ? { noService } : {}),
    caveats,
    outcomeCaveats: drainingCaveats(node, t),
    cannotTell: !pinned && (everyUnknown || noServiceUnknown || t.outcomes.length === 0),
  };
}
