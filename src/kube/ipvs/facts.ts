/** One group of virtual servers → neutral facts → the one ServicePort builder (../service-builder.ts). */
import type { VirtualServer } from '../../model/ipvs.js';
import { appendAll } from '../../source/index.js';
import type { FrontEnd, OwnedObject, ServiceFacts } from '../facts.js';
import { problem, uniqueProblems, type ServiceProblem } from '../problems.js';
import { buildServicePort } from '../service-builder.js';
import type { Evidence, ServicePort } from '../types.js';
import { balanceOf, checkConsistency, fullServer, LocalCheck } from './balancing.js';
import { ipvs0Evidence, memberEvidence, vsEvidence } from './evidence.js';
import { checkLocalHasRemote, localServers, noEndpointFacts, sourceRangesOf, trafficPolicies } from './firewall.js';
import { groupAnchorId, groupName } from './identity.js';
import type { FamilySets, SetsByFamily } from './sets.js';
import type { Group, Problem, Vs } from './types.js';

export interface FactsContext {
  readonly sets: SetsByFamily;
  /** Where each cut listing ends: its last virtual server's real servers may go on past the cut. */
  readonly cutAt: ReadonlyMap<VirtualServer, { file: string; line: number }>;
  readonly locality: (ip: string) => boolean | null;
  /** The resolution's problems (with evidence): each virtual server's own go there too. */
  readonly problems: Problem[];
}

export function servicePortOf(ctx: FactsContext, g: Group): ServicePort {
  const a = g.anchor;
  const first = a ?? g.items[0].vss[0];
  const sets = ctx.sets[first.family];
  const spProblems: ServiceProblem[] = [...g.problems];
  const all: Vs[] = [...(a ? [a] : []), ...g.items.flatMap((i) => i.vss)];
  const fronts = frontEndsOf(all, a, sets, spProblems, ctx.problems);
  const port = portOf(g, spProblems);
  const sourceRanges = sourceRangesOf(g, spProblems);
  const full = fullServer(g, all);
  checkConsistency(g, all, full, spProblems);
  const persistent = (a ?? full).vs.persistent;
  const local = new LocalCheck(sets, first.protocol, ctx.locality);
  // kube-proxy puts only local endpoints behind Local-policy virtual servers (trusted only when a
  // -LOCAL ipset says so, not when the policy itself was inferred from real-server subsets).
  const localKeys = new Set(g.inferredExternalLocal ? [] : localServers(g).flatMap((v) => v.rsKeys));
  const balance = balanceOf(all, full, { cutAt: ctx.cutAt, local, localKeys });
  const policies = trafficPolicies(g, full, spProblems);
  const { noEndpoints, allDraining } = noEndpointFacts(g, balance, local, spProblems);
  checkLocalHasRemote(g, local, spProblems);
  const spn = groupName(g);
  const typed: ServiceProblem[] = uniqueProblems(spProblems);
  if (allDraining) typed.unshift(problem('all-weights-zero', {}));
  const facts: ServiceFacts = {
    mode: 'ipvs',
    family: first.family,
    anchor: groupAnchorId(g),
    ...(spn ? { identity: { ...spn, by: 'set-comment' as const } } : {}),
    protocol: first.protocol,
    port,
    frontEnds: fronts.frontEnds,
    sourceRanges,
    ...policies,
    ...(persistent !== undefined ? { affinitySeconds: persistent } : {}),
    targets: balance.endpoints,
    noEndpoints,
    absences: [
      ...(balance.cut ? [{ code: 'listing-truncated' as const, file: balance.cut.file, line: balance.cut.line }] : []),
      ...balance.named.map((rs) => ({ code: 'real-server-not-an-address' as const, vs: full.key, name: rs.address, file: full.vs.file, line: rs.line })),
    ],
    problems: typed,
    owned: fronts.owned,
    hashClaims: [],
    evidence: fronts.evidence,
  };
  return buildServicePort(facts, ctx.locality);
}

interface Fronts {
  readonly evidence: Evidence[];
  readonly owned: OwnedObject[];
  readonly frontEnds: FrontEnd[];
}

/** Each virtual server as a front end, with its evidence (listing lines, set members, kube-ipvs0 address) and problems. */
function frontEndsOf(all: readonly Vs[], a: Vs | undefined, sets: FamilySets, spProblems: ServiceProblem[], problems: Problem[]): Fronts {
  const evidence: Evidence[] = [];
  const owned: OwnedObject[] = [];
  const frontEnds: FrontEnd[] = [];
  for (const v of all) {
    evidence.push(vsEvidence(v.vs));
    appendAll(evidence, v.copies.map(vsEvidence));
    for (const r of [...v.members, ...v.localMembers.filter((x) => !v.members.includes(x)), ...v.fwMembers, ...v.sourceCidrMembers, ...v.sourceIpMembers]) evidence.push(memberEvidence(r));
    if (v.ipvs0) evidence.push(ipvs0Evidence(v.ipvs0.iface, v.ipvs0.address));
    const ipvsIps = sets.ipvsIps(v.ip);
    if (ipvsIps) evidence.push(memberEvidence(ipvsIps));
    for (const p of v.problems) {
      spProblems.push(p.problem);
      problems.push(p);
    }
    const kind = v === a ? 'cluster-ip' : v.role === 'nodeport' ? 'node-port' : v.role === 'lb' ? 'load-balancer-ip' : 'external-ip';
    owned.push({ role: kind, name: v.key, ...(v === a ? {} : { address: v.ipText }) });
    frontEnds.push({ kind, ip: kind === 'node-port' ? null : v.ipText, port: v.port, evidence: vsEvidence(v.vs) });
  }
  return { evidence, owned, frontEnds };
}

/** The Service port's port: the ClusterIP's, else an externalIP's or LoadBalancer's (a NodePort is no Service port). */
function portOf(g: Group, problems: ServiceProblem[]): number {
  const a = g.anchor;
  const npItems = g.items.filter((i) => i.role === 'nodeport');
  if (npItems.length > 1) problems.push(problem('ipvs-several-nodeports', { ports: npItems.map((i) => i.port) }));
  const port = a?.port ?? g.items.find((i) => i.role !== 'nodeport')?.port ?? 0;
  if (!a && port === 0) problems.push(problem('ipvs-port-unknown', {}));
  return port;
}
