/** One nftables Service port group → the mode-neutral facts (../facts.ts) → the one ServicePort builder. */
import { appendAll } from '../../source/index.js';
import type { Absence, OwnedObject, ServiceFacts } from '../facts.js';
import { servicePortName } from '../hash.js';
import { problem, uniqueProblems, type ServiceProblem } from '../problems.js';
import { buildServicePort } from '../service-builder.js';
import type { Evidence, Protocol, ServicePort } from '../types.js';
import { addressesOf, nftFrontEnds, type Addresses, type ClusterIPHints } from './addresses.js';
import { readBalancing, type BalanceRead } from './balancing.js';
import { affinityOf, checkLocalInService, endpointsOf } from './endpoints.js';
import { noEndpointFacts, sourceRangesOf, trafficPolicies } from './firewall.js';
import { HashCheck, type NftObjectName } from './identity.js';
import { cachedName, chainEvidence, ruleEvidence, type Ctx, type Group } from './table.js';

/** Identity: chain names first, then element comments; a comment that disagrees is a problem. */
function identityOf(g: Group, problems: ServiceProblem[]): { parsed?: NftObjectName; identity?: ServiceFacts['identity'] } {
  const parsed = g.parsed && g.parsed.namespace !== undefined ? g.parsed : undefined;
  const identity = parsed ? { namespace: parsed.namespace!, name: parsed.name!, portName: parsed.portName ?? null } : g.commentId;
  if (parsed && g.commentId) {
    const c = g.commentId;
    if (c.namespace !== parsed.namespace || c.name !== parsed.name || c.portName !== (parsed.portName ?? null)) {
      problems.push(problem('nft-comment-disagrees', { comment: servicePortName(c.namespace, c.name, c.portName), chains: servicePortName(parsed.namespace!, parsed.name!, parsed.portName ?? null) }));
    }
  }
  // Chain names carry the name in clear behind their hash: 'hash' is the closest schema value.
  return { parsed, identity: identity ? { ...identity, by: parsed ? ('hash' as const) : ('set-comment' as const) } : undefined };
}

/** The chain whose targets are the endpoints: service- (Cluster policy), else local-, else an element straight to an endpoint chain. */
function balancingOf(ctx: Ctx, g: Group, svcRead: BalanceRead | undefined, localRead: BalanceRead | undefined): BalanceRead | undefined {
  const balancing = svcRead ?? localRead;
  if (balancing || g.directEndpoints.length === 0) return balancing;
  // An element straight to an endpoint chain: that endpoint takes every new connection to that VIP.
  const first = g.directEndpoints[0];
  return { chain: ctx.chains.get(first.chain) ?? { name: first.chain, rules: [], line: first.element.line }, targets: [{ chain: first.chain, keys: 1, evidence: [first.element] }], mod: 1, affinity: [], problems: [] };
}

/** Front ends; a cluster IP known only from the masquerade rule (no map element names it) too. */
function frontEndsOf(ctx: Ctx, g: Group, a: Addresses, svcRead: BalanceRead | undefined, localRead: BalanceRead | undefined, evidence: readonly Evidence[]) {
  const frontEnds = nftFrontEnds(g, a.clusterIP, a.externalIPs, a.loadBalancerIPs);
  if (a.clusterIP !== undefined && !frontEnds.some((f) => f.kind === 'cluster-ip')) {
    const masq = svcRead?.masq ?? localRead?.masq;
    const masqRead = svcRead?.masq ? svcRead : localRead;
    const ev = masq && masqRead ? ruleEvidence(ctx, masqRead.chain, masq.rule) : evidence[0];
    if (ev) frontEnds.unshift({ kind: 'cluster-ip', ip: a.clusterIP, port: a.port ?? null, evidence: ev });
  }
  return frontEnds;
}

/** Read a Service port group into neutral facts and build it (service-builder.ts). */
export function servicePortOf(ctx: Ctx, g: Group, hints: ClusterIPHints, kindHints: ReadonlyMap<string, 'external' | 'loadbalancer'> | undefined): ServicePort {
  const problems = [...g.problems];
  const evidence = [...g.evidence];
  const { service: svcChain, local: localChain, external: extChain, firewall: fwChain } = g.chains;
  for (const c of [svcChain, localChain, extChain, fwChain]) if (c) appendAll(evidence, chainEvidence(ctx, c));
  const { parsed, identity } = identityOf(g, problems);
  const protocol: Protocol = g.protocol ?? parsed?.protocol ?? 'tcp';

  const svcRead = svcChain ? readBalancing(ctx, svcChain) : undefined;
  const localRead = localChain ? readBalancing(ctx, localChain) : undefined;
  const balancing = balancingOf(ctx, g, svcRead, localRead);
  for (const r of [svcRead, localRead]) if (r) appendAll(problems, r.problems);
  const addresses = addressesOf(g, svcRead, localRead, hints, kindHints, problems);
  const policies = trafficPolicies(ctx, g, addresses.clusterIP, addresses.internalTarget, problems);
  const sourceRanges = sourceRangesOf(fwChain, addresses.loadBalancerIPs, problems);

  const absences: Absence[] = [];
  const ownChains: Record<string, string> = {};
  if (svcChain) ownChains.service = svcChain.name;
  if (localChain) ownChains.local = localChain.name;
  if (extChain) ownChains.external = extChain.name;
  if (fwChain) ownChains.firewall = fwChain.name;
  const hashes = new HashCheck(problems);
  for (const c of [svcChain, localChain, extChain, fwChain]) if (c) hashes.verify(c.name, cachedName(ctx, c.name));
  const targets = balancing ? endpointsOf({ ctx, balancing, svcRead, localRead, parsed, hashes, ownChains, absences, problems }) : [];
  if (localRead && svcRead) checkLocalInService(svcRead, localRead, problems);
  const affinity = affinityOf(ctx, svcRead, localRead, hashes, ownChains, problems);

  const { noEndpoints, rejects } = noEndpointFacts(g, policies, targets.length, problems);
  const dropsOrRejects = rejects || policies.internalDrop || policies.externalDrop;
  for (const chain of g.absentTargets) absences.push({ code: 'service-chain-absent', chain });
  // A listing cut mid-way: this Service port's chains, map elements and endpoints may go on past the cut.
  if (ctx.table.truncated && !dropsOrRejects) absences.push({ code: 'table-truncated', table: ctx.where, file: ctx.table.file, line: ctx.table.endLine, listing: 'nft' });
  if (!balancing && !dropsOrRejects && g.absentTargets.length === 0 && !ctx.table.truncated) {
    problems.push(problem('nft-nothing-delivers', {}));
  }
  const port = addresses.port;
  const facts: ServiceFacts = {
    mode: 'nftables',
    family: ctx.family,
    anchor: g.key,
    ...(identity ? { identity } : {}),
    ...(protocol ? { protocol } : {}),
    ...(port !== undefined ? { port } : {}),
    frontEnds: frontEndsOf(ctx, g, addresses, svcRead, localRead, evidence),
    sourceRanges: [...sourceRanges].sort(),
    externalTrafficPolicy: policies.externalTrafficPolicy,
    internalTrafficPolicy: policies.internalTrafficPolicy,
    ...(affinity !== undefined ? { affinitySeconds: affinity } : {}),
    targets,
    noEndpoints,
    absences,
    problems: uniqueProblems(problems),
    owned: Object.entries(ownChains).map(([key, name]): OwnedObject => ({ role: key.replace(/\d+$/, '') as OwnedObject['role'], name })),
    hashClaims: [],
    hashVerified: hashes.verified,
    evidence,
  };
  return buildServicePort(facts, ctx.locality);
}
