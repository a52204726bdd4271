/**
 * The judgement: one answer per Service port and per traced flow, computed once from every
 * reader's facts (docs/ARCHITECTURE.md "The judgement").
 *
 * Readers say what the evidence shows and, as explicitly, what it does not (src/kube facts and
 * absences, src/trace steps and UNKNOWN ends). The judgement puts them together with what no single
 * reader knows: how complete each table's evidence is (evidence.ts: whole, cut, a grep, restore
 * input, edited, a second view), kube-proxy's sync health from its log (sync.ts), IPVS sysctls and
 * connections, conntrack entries, leftovers of another proxy mode. The rule that keeps it honest: a
 * claim of absence ("no endpoints", "no Service matches", "no rule claimed the packet", "dropped")
 * rests on whole evidence for what it depends on, or on a rule that says so; otherwise the state
 * or the share is UNKNOWN, with its reason.
 *
 * Who reads it: `services` (STATE/REASON, the unknown share, caveats), `trace` (the verdict line:
 * judgeFlow), lint (rules read ServiceJudgement states through the judged resolution), `summarize`,
 * `report`, `diff` and the cluster commands (all take the judged resolution). None decides on its own.
 *
 * Public shape:
 *   judgeSnapshot(snapshot) / judgeNode(snapshot, resolution) → NodeJudgement
 *     .resolution        the Service ports, each with the judged `state` (the one every command prints)
 *     .judgementOf(s)    ServiceJudgement {state, reason, more, unknown, caveats}
 *     .evidence          TableEvidence per table; .stale; .secondViews; .leftovers; .liveModes
 *   judgeFlow(node, trace) → FlowJudgement {verdict, shares, unknown, pinned, noService, caveats, cannotTell}
 */
import { resolveServices } from '../kube/resolve.js';
import type { Resolution, ServicePort } from '../kube/types.js';
import type { ProxyMode } from '../model/snapshot.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { proxyModes } from '../kube/modes.js';
import { stateReason } from '../kube/state-reason.js';
import { evidenceOf, partialListings } from './evidence.js';
import { HEALTHY, judgeService, serviceContext } from './service.js';
import { staleRules } from './sync.js';
import type { Leftovers, NodeJudgement, ServiceJudgement } from './types.js';

export type * from './types.js';
export { judgeFlow } from './flow.js';
export { evidenceOf, isWhole, mentionsName, mentionsOf, partialEvidence, partialListings } from './evidence.js';
export { payloadLineOwner, failuresByTool, withPayload } from './sync.js';



const judged = new WeakMap<Resolution, NodeJudgement>();

/** Judge a resolution of this snapshot (once: the same resolution gives the same judgement). */
export function judgeNode(snapshot: NodeSnapshot, resolution: Resolution): NodeJudgement {
  const known = judged.get(resolution);
  if (known) return known;
  const stale = staleRules(snapshot, resolution);
  const ctx = serviceContext(snapshot, stale);
  const byPort = new Map<ServicePort, ServiceJudgement>();
  const services = resolution.services.map((s) => {
    const j = judgeService(s, ctx);
    // Only a changed state makes a new object: the rest are the resolver's own (10k Service ports).
    const port = j.state === s.state ? s : { ...s, state: j.state };
    if (j !== HEALTHY) byPort.set(port, j);
    return port;
  });
  const out: Resolution = { ...resolution, services };
  const leftovers: Leftovers[] = [];
  for (const p of resolution.problems) {
    if (p.problem.code !== 'leftover-service-chains') continue;
    const e = p.evidence[0];
    leftovers.push({ file: p.problem.file, table: p.problem.table, chains: p.problem.chains, servicePorts: p.problem.servicePorts, example: p.problem.example, ...(e ? { cite: { file: e.file, line: e.line, text: e.text } } : {}) });
  }
  const liveModes: ProxyMode[] = [...new Set(services.map((s) => s.mode))];
  // Which modes only leftovers show: asked only when there are leftovers (proxyModes reads every rule).
  const seen = leftovers.length ? proxyModes(snapshot) : [];
  const node: NodeJudgement = {
    snapshot,
    resolution: out,
    evidence: evidenceOf(snapshot),
    listings: partialListings(snapshot),
    ...(stale ? { stale } : {}),
    secondViews: snapshot.secondViews ?? [],
    leftovers,
    liveModes,
    leftoverModes: leftovers.length ? seen.filter((m) => !liveModes.includes(m)) : [],
    judgementOf: lookup(byPort),
  };
  judged.set(resolution, node);
  judged.set(out, node);
  return node;
}

/**
 * A Service port's judgement from the judged ones (a function of its own, so that it holds the map
 * and not judgeNode's scope — the snapshot — once the snapshot is let go).
 */
function lookup(byPort: ReadonlyMap<ServicePort, ServiceJudgement>): (s: ServicePort) => ServiceJudgement {
  return (s) => {
    const j = byPort.get(s);
    if (j) return j;
    if (s.state === 'healthy') return HEALTHY;
    const r = stateReason(s);
    return { state: s.state, reason: r?.code ?? null, more: r?.more ?? 0, unknown: null, caveats: [] };
  };
}

/** Resolve and judge a snapshot: what every command that answers about Services starts from. */
export async function judgeSnapshot(snapshot: NodeSnapshot): Promise<NodeJudgement> {
  return judgeNode(snapshot, await resolveServices(snapshot));
}

/** The judged Service ports of a snapshot (judgeSnapshot(snapshot).resolution): for commands that need only them. */
export async function resolveJudged(snapshot: NodeSnapshot): Promise<Resolution> {
  return (await judgeSnapshot(snapshot)).resolution;
}
